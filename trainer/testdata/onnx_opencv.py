"""Runs an ONNX model exported by gpuwizard with OpenCV's DNN module.

Usage: onnx_opencv.py MODEL.onnx INPUTS.f32 N C H W

INPUTS.f32 holds N images as little-endian float32, N×C×H×W (what
gpuwizard predict feeds the model). Each image is run on its own, as
predict runs them; the class probabilities of each are printed as one JSON
list of lists on stdout. Run it with Debian's /usr/bin/python3 and
python3-opencv (cv2.dnn.readNetFromONNX).
"""
import json
import sys

import cv2
import numpy as np


def main():
    model, inputs = sys.argv[1], sys.argv[2]
    n, c, h, w = (int(v) for v in sys.argv[3:7])
    x = np.fromfile(inputs, dtype="<f4").reshape(n, c, h, w)
    net = cv2.dnn.readNetFromONNX(model)
    out = []
    for i in range(n):
        net.setInput(x[i : i + 1])
        out.append([float(p) for p in net.forward().reshape(-1)])
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
