# gpuwizard deep check: uses the GPU for real through PyTorch and prints one
# JSON line. Run by `gpuwizard doctor --deep` in every interpreter with torch.
import json
import sys
import warnings

out = {"ran": True, "devices": [], "warnings": []}


def err(e):
    return "%s: %s" % (type(e).__name__, str(e).strip())


def main():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            import torch
        except Exception as e:  # ImportError, OSError from a missing DLL/so
            out["error"] = err(e)
            return
        out["torch"] = torch.__version__
        out["torch_cuda"] = torch.version.cuda
        try:
            out["cuda_available"] = bool(torch.cuda.is_available())
        except Exception as e:
            out["cuda_available"] = False
            out["error"] = err(e)
        if not out["cuda_available"]:
            # Ask CUDA for real to get the exact reason text.
            try:
                torch.zeros(1).cuda()
            except Exception as e:
                out.setdefault("error", err(e))
        else:
            out["device_count"] = torch.cuda.device_count()
            try:
                out["arch_list"] = torch.cuda.get_arch_list()
            except Exception as e:
                out["error"] = err(e)
            try:
                v = torch.backends.cudnn.version()
                out["cudnn"] = "" if v is None else str(v)
            except Exception as e:
                out["cudnn_error"] = err(e)
            for i in range(out["device_count"]):
                d = {"index": i, "matmul_ok": False, "conv_ok": False}
                try:
                    d["name"] = torch.cuda.get_device_name(i)
                    d["compute_capability"] = "%d.%d" % torch.cuda.get_device_capability(i)
                    dev = torch.device("cuda", i)
                    a = torch.randn(256, 256, device=dev, requires_grad=True)
                    b = torch.randn(256, 256, device=dev)
                    (a @ b).relu().sum().backward()
                    torch.cuda.synchronize(dev)
                    d["matmul_ok"] = bool(torch.isfinite(a.grad).all().item())
                    conv = torch.nn.Conv2d(3, 8, 3, padding=1).to(dev)
                    x = torch.randn(4, 3, 32, 32, device=dev, requires_grad=True)
                    conv(x).square().mean().backward()
                    torch.cuda.synchronize(dev)
                    d["conv_ok"] = bool(torch.isfinite(x.grad).all().item())
                except Exception as e:
                    d["error"] = err(e)
                out["devices"].append(d)
    out["warnings"] = [str(w.message).strip() for w in caught][:10]


try:
    main()
except BaseException as e:  # never let the check itself hide the answer
    out["error"] = err(e)
sys.stdout.write("GPUWIZARD_DEEP " + json.dumps(out) + "\n")
