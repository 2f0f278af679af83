#!/usr/bin/python3
"""Golden values for detect.Evaluate, computed with numpy alone.

Run with Debian's python3-numpy (/usr/bin/python3): it writes
map_golden.json beside this file. Each case is random boxes and
detections (seeded) and what the definitions in map.go give for them,
computed here independently, in numpy's own operations:

- matching per image and class at IoU 0.50:0.05:0.95 (np.linspace), the
  detections by falling score each taking the free ground truth of highest
  IoU at or above the threshold (as pycocotools' COCOeval.evaluateImg);
- AP as the mean of the non-increasing precision at the first index where
  recall reaches each of np.linspace(0, 1, 101) (COCOeval.accumulate),
  averaged over the classes with objects;
- precision, recall and F1 at the threshold of the highest smoothed mean
  F1, on curves sampled with np.interp at np.linspace(0, 1, 1000)
  (Ultralytics' ap_per_class).
"""
import json
import os

import numpy as np


def iou(a, b):
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def evaluate(preds, truths, nc):
    thr = np.linspace(0.5, 0.95, 10)
    npos = np.zeros(nc, dtype=int)
    scores = [[] for _ in range(nc)]  # per class: (score, tp[10])
    for p, g in zip(preds, truths):
        for c in range(nc):
            gt = [o["box"] for o in g if o["class"] == c]
            npos[c] += len(gt)
            dt = [d for d in p if d["class"] == c]
            order = np.argsort([-d["score"] for d in dt], kind="mergesort")
            dt = [dt[i] for i in order]
            taken = np.zeros((10, len(gt)), dtype=bool)
            for d in dt:
                ious = np.array([iou(d["box"], b) for b in gt])
                tp = np.zeros(10, dtype=bool)
                for t in range(10):
                    best, m = min(thr[t], 1 - 1e-10), -1
                    for gi in range(len(gt)):
                        if taken[t, gi] or ious[gi] < best:
                            continue
                        best, m = ious[gi], gi
                    if m >= 0:
                        taken[t, m] = True
                        tp[t] = True
                scores[c].append((d["score"], tp))
    per_class, p_curves, r_curves = [], [], []
    x = np.linspace(0, 1, 1000)
    for c in range(nc):
        if npos[c] == 0:
            continue
        s = scores[c]
        conf = np.array([v[0] for v in s], dtype=float)
        tps = np.array([v[1] for v in s], dtype=bool).reshape(-1, 10)
        order = np.argsort(-conf, kind="mergesort")
        conf, tps = conf[order], tps[order]
        aps = np.zeros(10)
        for t in range(10):
            if len(conf) == 0:
                continue
            tp = np.cumsum(tps[:, t]).astype(float)
            fp = np.cumsum(~tps[:, t]).astype(float)
            rc = tp / npos[c]
            pr = tp / (fp + tp + np.spacing(1))
            pr = np.maximum.accumulate(pr[::-1])[::-1]
            inds = np.searchsorted(rc, np.linspace(0, 1, 101), side="left")
            q = np.array([pr[i] if i < len(pr) else 0.0 for i in inds])
            aps[t] = q.mean()
        pc, rcv = np.zeros(1000), np.zeros(1000)
        if len(conf):
            tpc = np.cumsum(tps[:, 0]).astype(float)
            fpc = np.cumsum(~tps[:, 0]).astype(float)
            rcv = np.interp(-x, -conf, tpc / (npos[c] + 1e-16), left=0)
            pc = np.interp(-x, -conf, tpc / (tpc + fpc), left=1)
        p_curves.append(pc)
        r_curves.append(rcv)
        per_class.append({"class": c, "objects": int(npos[c]), "ap50": aps[0], "ap50_95": aps.mean()})
    out = {"objects": int(npos.sum()), "map50": 0.0, "map50_95": 0.0, "precision": 0.0, "recall": 0.0, "f1": 0.0, "threshold": 0.0, "per_class": per_class}
    if not per_class:
        return out
    p_curves, r_curves = np.array(p_curves), np.array(r_curves)
    f1 = 2 * p_curves * r_curves / (p_curves + r_curves + 1e-16)
    y = f1.mean(0)
    nf = round(len(y) * 0.1 * 2) // 2 + 1
    pad = np.ones(nf // 2)
    ys = np.convolve(np.concatenate((pad * y[0], y, pad * y[-1])), np.ones(nf) / nf, mode="valid")
    i = int(ys.argmax())
    for k, pcl in enumerate(per_class):
        pcl["precision"], pcl["recall"] = p_curves[k, i], r_curves[k, i]
    out.update({
        "map50": float(np.mean([v["ap50"] for v in per_class])),
        "map50_95": float(np.mean([v["ap50_95"] for v in per_class])),
        "precision": float(p_curves[:, i].mean()), "recall": float(r_curves[:, i].mean()),
        "f1": float(f1[:, i].mean()), "threshold": float(x[i]), "best_index": i,
    })
    return out


def f32(v):
    return float(np.float32(v))


def box(rng, size):
    w, h = rng.uniform(4, size / 2, 2)
    x, y = rng.uniform(0, size - w), rng.uniform(0, size - h)
    return [f32(x), f32(y), f32(x + w), f32(y + h)]


def jitter(rng, b, amount):
    w, h = b[2] - b[0], b[3] - b[1]
    d = rng.normal(0, amount, 4) * np.array([w, h, w, h])
    return [f32(b[0] + d[0]), f32(b[1] + d[1]), f32(max(b[2] + d[2], b[0] + d[0] + 1)), f32(max(b[3] + d[3], b[1] + d[1] + 1))]


def case(seed):
    rng = np.random.default_rng(seed)
    nc = int(rng.integers(1, 5))
    size = 100.0
    truths, preds = [], []
    for _ in range(int(rng.integers(1, 7))):
        g = [{"class": int(rng.integers(0, nc)), "box": box(rng, size)} for _ in range(int(rng.integers(0, 6)))]
        p = []
        for o in g:
            for _ in range(int(rng.integers(0, 3))):  # 0 to 2 detections of each object
                cls = o["class"] if rng.random() < 0.85 else int(rng.integers(0, nc))
                p.append({"class": cls, "score": f32(rng.random()), "box": jitter(rng, o["box"], rng.choice([0.02, 0.08, 0.2]))})
        for _ in range(int(rng.integers(0, 4))):  # false alarms
            p.append({"class": int(rng.integers(0, nc + 1) % nc), "score": f32(rng.random() * 0.6), "box": box(rng, size)})
        truths.append(g)
        preds.append(p)
    classes = [f"c{i}" for i in range(nc)]
    return {"seed": seed, "classes": classes, "truths": truths, "preds": preds, "want": evaluate(preds, truths, nc)}


def main():
    cases = [case(s) for s in range(1, 41)]
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "map_golden.json"), "w") as f:
        json.dump({"numpy": np.__version__, "cases": cases}, f, indent=None, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
