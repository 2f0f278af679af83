#!/usr/bin/env python3
"""The PyTorch twin of gpuwizard's detectors (det-n, det-s), for speed and
accuracy comparisons on the same CPU or GPU.

Same layers (trainer/model/detector.go: conv-BN-SiLU blocks, stride-2
stages to stride 8, the neck, a 1x1 head with bias), same targets
(trainer/detect/assign.go: centre sampling within 1.5 strides, the smaller
object wins, weights 1/positive cells of the batch), same loss
(trainer/detect/loss.go: 5*(1-GIoU) + L1 box, BCE classes, BCE objectness),
same optimiser (Adam, linear warm-up over the first epoch, cosine to 1 %),
same data: the folder bench/detdump writes from detect.Load.

Not the same: no augmentation here (gpuwizard jitters each training image's
colours, and flips it when the set allows), which only makes the twin's
steps cheaper.

  go run -tags migrated_fynedo ./bench/detdump -data builtin-detect -size 128 -out /tmp/bd
  python3 bench/det_twin.py /tmp/bd --speed 20          # images/s of training steps
  python3 bench/det_twin.py --random 320 --batch 16 --speed 10   # as `gpuwizard bench --model det-n --image-size 320`
  python3 bench/det_twin.py /tmp/bd --epochs 10 --heads /tmp/bd/heads.f32
  go run -tags migrated_fynedo ./bench/detdump -data builtin-detect -size 128 -heads /tmp/bd/heads.f32

The last line decodes the twin's validation heads with gpuwizard's own
decoding, NMS and mAP (detect.Detections, detect.Evaluate).
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

STRIDE = 8
RADIUS = 1.5
LOG_CLAMP = 8.0
GAINS = dict(giou=5.0, l1=1.0, cls=1.0, obj=1.0)


def block(cin, cout, k, stride):
    return [nn.Conv2d(cin, cout, k, stride, k // 2, bias=False),
            nn.BatchNorm2d(cout, eps=1e-5, momentum=0.1), nn.SiLU()]


class Detector(nn.Module):
    def __init__(self, kind, channels, classes):
        super().__init__()
        widths, neck = ([16, 32, 64], 2) if kind == "det-n" else ([24, 48, 96], 3)
        layers, cin = [], channels
        for i, w in enumerate(widths):
            layers += block(cin, w, 3, 2)
            if i > 0:
                layers += block(w, w, 3, 1)
            cin = w
        for _ in range(neck):
            layers += block(cin, cin, 3, 1)
        layers += block(cin, cin, 1, 1)
        layers.append(nn.Conv2d(cin, 5 + classes, 1, 1, 0, bias=True))
        self.net = nn.Sequential(*layers)
        # gpuwizard's initialisation (trainer/model): He-normal convolutions,
        # the head's weights N(0, 0.01) and its objectness and class biases at
        # the logit of 1 % (box biases 0).
        convs = [m for m in self.net if isinstance(m, nn.Conv2d)]
        for m in convs[:-1]:
            nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
        head = convs[-1]
        nn.init.normal_(head.weight, std=0.01)
        with torch.no_grad():
            head.bias.zero_()
            head.bias[4:] = math.log(0.01 / 0.99)

    def forward(self, x):
        return self.net(x)


def assign(objs, gh, gw):
    """Targets of a batch: per cell (N*gh*gw) obj, objw, posw, class, box in
    strides from the cell's centre (x1, y1, x2, y2)."""
    cells = gh * gw
    t = np.zeros((len(objs) * cells, 8), np.float32)
    npos = 0
    for i, boxes in enumerate(objs):
        owner = np.full(cells, -1)
        area = np.full(cells, np.inf, np.float32)
        for k, (c, x1, y1, x2, y2) in enumerate(boxes):
            if not (x2 > x1 and y2 > y1):
                continue
            a = (x2 - x1) * (y2 - y1)
            bx, by = (x1 + x2) / 2, (y1 + y2) / 2
            r = RADIUS * STRIDE

            def take(gx, gy):
                if 0 <= gx < gw and 0 <= gy < gh:
                    q = gy * gw + gx
                    if a < area[q]:
                        owner[q], area[q] = k, a
            gx0, gx1 = int(max(x1, bx - r) / STRIDE), int(min(x2, bx + r) / STRIDE)
            gy0, gy1 = int(max(y1, by - r) / STRIDE), int(min(y2, by + r) / STRIDE)
            for gy in range(max(gy0, 0), min(gy1, gh - 1) + 1):
                cy = (gy + 0.5) * STRIDE
                if cy <= y1 or cy >= y2 or abs(cy - by) >= r:
                    continue
                for gx in range(max(gx0, 0), min(gx1, gw - 1) + 1):
                    cx = (gx + 0.5) * STRIDE
                    if x1 < cx < x2 and abs(cx - bx) < r:
                        take(gx, gy)
            take(int(bx / STRIDE), int(by / STRIDE))
        for q in np.nonzero(owner >= 0)[0]:
            c, x1, y1, x2, y2 = boxes[owner[q]]
            cx, cy = (q % gw + 0.5) * STRIDE, (q // gw + 0.5) * STRIDE
            t[i * cells + q] = [1, 0, 1, c, (x1 - cx) / STRIDE, (y1 - cy) / STRIDE, (x2 - cx) / STRIDE, (y2 - cy) / STRIDE]
            npos += 1
    w = 1 / max(npos, 1)
    t[:, 1] = w
    t[:, 2] *= w
    return torch.from_numpy(t)


def loss_terms(head, t, classes):
    """The box, class and objectness terms summed over the batch."""
    m = head.permute(0, 2, 3, 1).reshape(-1, 5 + classes)
    obj, objw, posw, cls, tb = t[:, 0], t[:, 1], t[:, 2], t[:, 3].long(), t[:, 4:8]
    pos = posw > 0
    r, tb, pw = m[pos, :4], tb[pos], posw[pos]
    tw, th = r[:, 2].clamp(-LOG_CLAMP, LOG_CLAMP), r[:, 3].clamp(-LOG_CLAMP, LOG_CLAMP)
    w, h = tw.exp(), th.exp()
    px1, py1, px2, py2 = r[:, 0] - w / 2, r[:, 1] - h / 2, r[:, 0] + w / 2, r[:, 1] + h / 2
    iw = (torch.minimum(px2, tb[:, 2]) - torch.maximum(px1, tb[:, 0])).clamp(min=0)
    ih = (torch.minimum(py2, tb[:, 3]) - torch.maximum(py1, tb[:, 1])).clamp(min=0)
    inter = iw * ih
    u = w * h + (tb[:, 2] - tb[:, 0]) * (tb[:, 3] - tb[:, 1]) - inter + 1e-7
    c = (torch.maximum(px2, tb[:, 2]) - torch.minimum(px1, tb[:, 0])) * \
        (torch.maximum(py2, tb[:, 3]) - torch.minimum(py1, tb[:, 1])) + 1e-7
    giou = 2 - inter / u - u / c
    l1t = torch.stack([(tb[:, 0] + tb[:, 2]) / 2, (tb[:, 1] + tb[:, 3]) / 2,
                       (tb[:, 2] - tb[:, 0]).clamp(min=1e-3).log(), (tb[:, 3] - tb[:, 1]).clamp(min=1e-3).log()], 1)
    box = (pw * (GAINS["giou"] * giou + GAINS["l1"] * (r - l1t).abs().sum(1))).sum()
    onehot = F.one_hot(cls[pos], classes).float()
    clsl = (pw * GAINS["cls"] * F.binary_cross_entropy_with_logits(m[pos, 5:], onehot, reduction="none").sum(1)).sum()
    objl = (objw * GAINS["obj"] * F.binary_cross_entropy_with_logits(m[:, 4], obj, reduction="none")).sum()
    return box, clsl, objl


def random_set(size, batch):
    """Four batches shaped like `gpuwizard bench`'s for a detector: colour
    canvases of random pixels, 10 classes, two random boxes an image."""
    rng = np.random.default_rng(1)
    n = 4 * batch
    px = rng.integers(0, 256, (n, 3, size, size), dtype=np.uint8)
    boxes = []
    for _ in range(n):
        im = []
        for _ in range(2):
            w, h = rng.uniform(8, size / 2, 2)
            x, y = rng.uniform(0, size - w), rng.uniform(0, size - h)
            im.append((int(rng.integers(10)), x, y, x + w, y + h))
        boxes.append(im)
    meta = {"classes": [str(c) for c in range(10)], "size": size, "channels": 3}
    return meta, {"train": (px, boxes), "val": (px[:0], [])}


def load(folder):
    meta = json.load(open(os.path.join(folder, "meta.json")))
    s, ch = meta["size"], meta["channels"]
    splits = {}
    for name in ("train", "val"):
        px = np.fromfile(os.path.join(folder, name + ".u8"), np.uint8).reshape(-1, ch, s, s)
        boxes = [[tuple(b) for b in (im or [])] for im in meta[name]["boxes"]]
        splits[name] = (px, boxes)
    return meta, splits


def lr_at(step, spe, total, peak):
    if step < spe:  # warm-up over the first epoch
        return peak * (step + 1) / spe
    f = (step - spe) / max(total - spe, 1)
    return peak * (0.01 + 0.99 * 0.5 * (1 + math.cos(math.pi * f)))


def train(args, meta, splits, dev):
    classes, s = len(meta["classes"]), meta["size"]
    gh = gw = s // STRIDE
    torch.manual_seed(args.seed)
    net = Detector(args.model, meta["channels"], classes).to(dev)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    px, boxes = splits["train"]
    n = len(px)
    spe = n // args.batch
    epochs = args.epochs if not args.speed else 1 + (args.speed + 5) // spe + 1
    total = spe * epochs
    rng = np.random.default_rng(args.seed)
    step, timed, t0 = 0, 0, None
    for ep in range(epochs):
        order = rng.permutation(n)
        sums, t_ep = np.zeros(3), time.perf_counter()
        net.train()
        for k in range(spe):
            idx = order[k * args.batch:(k + 1) * args.batch]
            if args.speed and step == 5:  # warmed up: time from here
                sync(dev)
                t0, c0 = time.perf_counter(), time.process_time()
            x = torch.from_numpy(px[idx].astype(np.float32) / 255).to(dev)
            t = assign([boxes[i] for i in idx], gh, gw).to(dev)
            for g in opt.param_groups:
                g["lr"] = lr_at(step, spe, total, args.lr)
            b, c, o = loss_terms(net(x), t, classes)
            opt.zero_grad(set_to_none=True)
            (b + c + o).backward()
            opt.step()
            sums += [b.item(), c.item(), o.item()]
            step += 1
            if args.speed and t0 is not None:
                timed += 1
                if timed == args.speed:
                    sync(dev)
                    ips = timed * args.batch / (time.perf_counter() - t0)
                    ipc = timed * args.batch / (time.process_time() - c0)
                    print(f"RESULT twin={args.model} device={dev} threads={torch.get_num_threads()} batch={args.batch} size={s} "
                          f"steps={timed} images_per_s={ips:.1f} images_per_cpu_s={ipc:.1f}")
                    return net
        dt = time.perf_counter() - t_ep
        print(f"epoch {ep + 1}/{epochs}: box {sums[0] / spe:.4f} cls {sums[1] / spe:.4f} obj {sums[2] / spe:.4f}  {dt:.1f} s  {spe * args.batch / dt:.1f} images/s", flush=True)
    return net


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def write_heads(net, px, path, dev):
    net.eval()
    with torch.no_grad(), open(path, "wb") as f:
        for k in range(0, len(px), 64):
            x = torch.from_numpy(px[k:k + 64].astype(np.float32) / 255).to(dev)
            f.write(net(x).float().cpu().numpy().astype(np.float32).tobytes())


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder", nargs="?", help="what bench/detdump wrote")
    p.add_argument("--random", type=int, default=0, metavar="SIZE", help="random colour SIZE x SIZE canvases instead (with --speed)")
    p.add_argument("--model", default="det-n", choices=["det-n", "det-s"])
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=0, help="CPU threads (0: all)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--speed", type=int, default=0, help="time this many training steps (after 5) and stop")
    p.add_argument("--heads", help="write the validation heads here (float32, N x (5+C) x H x W)")
    args = p.parse_args()
    torch.set_num_threads(args.threads or os.cpu_count())
    dev = torch.device(args.device)
    if args.random:
        meta, splits = random_set(args.random, args.batch)
        args.speed = args.speed or 10
    elif args.folder:
        meta, splits = load(args.folder)
    else:
        p.error("give the folder bench/detdump wrote, or --random SIZE")
    net = train(args, meta, splits, dev)
    if args.heads and not args.speed:
        write_heads(net, splits["val"][0], args.heads, dev)
        print(f"wrote {args.heads}", file=sys.stderr)


if __name__ == "__main__":
    main()
