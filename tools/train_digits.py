"""Train the demo's LeNet-style CNN on scikit-learn's 8x8 digits, in NumPy only.

    python tools/train_digits.py            # writes openvx_nn/demo/digits_lenet.npz

conv 3x3 (1->8, pad 1) -> relu -> max pool 2x2 -> conv 3x3 (8->16, pad 1) ->
relu -> max pool 2x2 -> fully connected 64->10 -> softmax.  scikit-learn only
loads the data (``pip install ".[train]"``); the seed and the held-out split
are fixed, so the file is reproducible.  Training uses NCHW arrays; the file
holds everything in OpenVX dim order (dim 0 = axis 0): images [8, 8, 1, N],
conv weights [kx, ky, #IFM, #OFM], FC weights [#IFM, #OFM] with the input
flattened as OpenVX does (x fastest, then y, then channel).
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "openvx_nn" / "demo" / "digits_lenet.npz"
SEED = 20240611
TEST_FRACTION = 0.2
FPP = 8  # Q7.8


def _im2col(x: np.ndarray, pad: int) -> np.ndarray:
    """(N, C, H, W) -> (N, H, W, C*9) patches of a 3x3 window, zero padded."""
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))  # N, C, H, W, 3, 3
    n, c, h, w = win.shape[:4]
    return win.transpose(0, 2, 3, 1, 4, 5).reshape(n, h, w, c * 9)


def conv_forward(x, w, b):
    cols = _im2col(x, 1)
    out = cols @ w.reshape(w.shape[0], -1).T + b  # N, H, W, K
    return out.transpose(0, 3, 1, 2), cols


def conv_backward(grad, cols, x_shape, w):
    n, k, h, wd = grad.shape
    g = grad.transpose(0, 2, 3, 1).reshape(-1, k)
    dw = (g.T @ cols.reshape(-1, cols.shape[-1])).reshape(w.shape)
    db = g.sum(axis=0)
    dcols = (g @ w.reshape(k, -1)).reshape(n, h, wd, x_shape[1], 3, 3)
    dxp = np.zeros((n, x_shape[1], h + 2, wd + 2))
    for i in range(3):
        for j in range(3):
            dxp[:, :, i:i + h, j:j + wd] += dcols[..., i, j].transpose(0, 3, 1, 2)
    return dxp[:, :, 1:-1, 1:-1], dw, db


def pool_forward(x):
    n, c, h, w = x.shape
    blocks = x.reshape(n, c, h // 2, 2, w // 2, 2)
    out = blocks.max(axis=(3, 5))
    mask = blocks == out[:, :, :, None, :, None]
    return out, mask


def pool_backward(grad, mask):
    g = mask * grad[:, :, :, None, :, None]
    g = g / np.maximum(mask.sum(axis=(3, 5), keepdims=True), 1)
    n, c, h2, _, w2, _ = g.shape
    return g.reshape(n, c, h2 * 2, w2 * 2)


def forward(params, x):
    w1, b1, w2, b2, w3, b3 = params
    c1, cols1 = conv_forward(x, w1, b1)
    r1 = np.maximum(c1, 0)
    p1, m1 = pool_forward(r1)
    c2, cols2 = conv_forward(p1, w2, b2)
    r2 = np.maximum(c2, 0)
    p2, m2 = pool_forward(r2)
    flat = p2.reshape(len(x), -1)
    logits = flat @ w3 + b3
    return logits, (x, c1, cols1, m1, p1, c2, cols2, m2, p2, flat)


def backward(params, cache, dlogits):
    w1, _, w2, _, w3, _ = params
    x, c1, cols1, m1, p1, c2, cols2, m2, p2, flat = cache
    dw3 = flat.T @ dlogits
    db3 = dlogits.sum(axis=0)
    dp2 = (dlogits @ w3.T).reshape(p2.shape)
    dc2 = pool_backward(dp2, m2) * (c2 > 0)
    dp1, dw2, db2 = conv_backward(dc2, cols2, p1.shape, w2)
    dc1 = pool_backward(dp1, m1) * (c1 > 0)
    _, dw1, db1 = conv_backward(dc1, cols1, x.shape, w1)
    return [dw1, db1, dw2, db2, dw3, db3]


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def train(x, y, epochs: int, rng: np.random.Generator):
    def he(shape, fan_in):
        return rng.normal(0, np.sqrt(2 / fan_in), shape)
    params = [he((8, 1, 3, 3), 9), np.zeros(8), he((16, 8, 3, 3), 72), np.zeros(16),
              he((64, 10), 64), np.zeros(10)]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    lr, beta1, beta2, step = 3e-3, 0.9, 0.999, 0
    onehot = np.eye(10)[y]
    for epoch in range(epochs):
        order = rng.permutation(len(x))
        for start in range(0, len(x), 32):
            idx = order[start:start + 32]
            logits, cache = forward(params, x[idx])
            grads = backward(params, cache, (softmax(logits) - onehot[idx]) / len(idx))
            step += 1
            for i, g in enumerate(grads):
                m[i] = beta1 * m[i] + (1 - beta1) * g
                v[i] = beta2 * v[i] + (1 - beta2) * g * g
                mh, vh = m[i] / (1 - beta1 ** step), v[i] / (1 - beta2 ** step)
                params[i] -= lr * mh / (np.sqrt(vh) + 1e-8)
    return params


def to_openvx(params) -> dict[str, np.ndarray]:
    """NCHW training weights -> OpenVX dim order (float32)."""
    w1, b1, w2, b2, w3, b3 = params
    return {"conv1_w": w1.transpose(3, 2, 1, 0), "conv1_b": b1, "conv2_w": w2.transpose(3, 2, 1, 0),
            "conv2_b": b2, "fc_w": w3, "fc_b": b3}


def quantize_q78(values: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(values * 2 ** FPP), -32768, 32767).astype(np.int16)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    from sklearn.datasets import load_digits  # only to load the data

    digits = load_digits()
    images = digits.images / 16.0  # [N, y, x] in [0, 1]
    labels = digits.target.astype(np.int64)
    rng = np.random.default_rng(SEED)
    order = rng.permutation(len(images))
    n_test = round(len(images) * TEST_FRACTION)
    test, train_idx = order[:n_test], order[n_test:]
    x = images[:, None, :, :]  # NCHW
    params = train(x[train_idx], labels[train_idx], args.epochs, rng)
    train_acc = float((forward(params, x[train_idx])[0].argmax(1) == labels[train_idx]).mean())
    test_acc = float((forward(params, x[test])[0].argmax(1) == labels[test]).mean())
    weights = {k: v.astype(np.float32) for k, v in to_openvx(params).items()}
    arrays = {f"f32_{k}": v for k, v in weights.items()}
    arrays.update({f"q78_{k}": quantize_q78(v) for k, v in weights.items()})
    arrays["test_images"] = x[test].transpose(3, 2, 1, 0).astype(np.float32)  # [x, y, 1, N]
    arrays["test_labels"] = labels[test].astype(np.uint8)
    arrays["numpy_test_accuracy"] = np.float64(test_acc)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, **arrays)
    print(f"train accuracy {train_acc:.4f}, held-out accuracy {test_acc:.4f} ({n_test} images) -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
