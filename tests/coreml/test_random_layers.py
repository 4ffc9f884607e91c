"""The random layers with shapes known at load (RandomNormal/Uniform/Bernoulli, Static and Like): the values are
the documented stream (docs/coreml.md; re-derived here from PCG64's raw words), a seeded layer gives the same
tensor on every run and in every model, seed -1 fresh values each run, the moments match the distribution, and
bad parameters are refused at load."""
from __future__ import annotations

import math

import numpy as np
import pytest

import openvx_nn.coreml as cm

from .harness import builder, close, load

SHAPE = (4, 50, 60)  # 12,000 draws
N = math.prod(SHAPE)


def _model(tmp_path, add, name="model"):
    b = builder({"x": SHAPE}, ["r", "z"], exact=True)
    add(b)
    b.add_activation("z", "LINEAR", "x", "z")  # the Like layers' input; the Static ones need some input
    return load(tmp_path, b, name)


def _draw(model):
    return model.predict({"x": np.zeros(SHAPE, np.float32)})["r"]


def _documented_uniforms(seed, count):
    """The stream as the docs word it: PCG64 seeded with seed mod 2**64, uniforms (word >> 11) / 2**53."""
    words = np.random.PCG64(seed % 2**64).random_raw(count)
    return np.array([(int(w) >> 11) / 2.0**53 for w in words])


LAYERS = {
    "normal-static": lambda b, seed: b.add_random_normal_static("r", "r", SHAPE, 1.5, 2.0, seed),
    "normal-like": lambda b, seed: b.add_random_normal_like("r", "x", "r", 1.5, 2.0, seed),
    "uniform-static": lambda b, seed: b.add_random_uniform_static("r", "r", SHAPE, -1.0, 3.0, seed),
    "uniform-like": lambda b, seed: b.add_random_uniform_like("r", "x", "r", -1.0, 3.0, seed),
    "bernoulli-static": lambda b, seed: b.add_random_bernoulli_static("r", "r", SHAPE, 0.3, seed),
    "bernoulli-like": lambda b, seed: b.add_random_bernoulli_like("r", "x", "r", 0.3, seed),
}


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_values_are_the_documented_stream(tmp_path, layer):
    seed = 12345
    got = _draw(_model(tmp_path, lambda b: LAYERS[layer](b, seed))).reshape(-1)
    kind = layer.split("-")[0]
    if kind == "normal":
        u = _documented_uniforms(seed, 2 * N)
        expected = [1.5 + 2.0 * math.sqrt(-2 * math.log(1 - u[2 * k])) * math.cos(2 * math.pi * u[2 * k + 1])
                    for k in range(N)]
    elif kind == "uniform":
        expected = [-1.0 + 4.0 * v for v in _documented_uniforms(seed, N)]
    else:
        expected = [1.0 if v < np.float32(0.3) else 0.0 for v in _documented_uniforms(seed, N)]
    close(got, np.array(expected))


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_moments_match_the_distribution(tmp_path, layer):
    values = _draw(_model(tmp_path, lambda b: LAYERS[layer](b, 7))).astype(np.float64).reshape(-1)
    kind = layer.split("-")[0]
    mean, var = {"normal": (1.5, 4.0), "uniform": (1.0, 16 / 12), "bernoulli": (0.3, 0.21)}[kind]
    # the sample mean within 5 standard errors; the sample variance within 10 %
    assert abs(values.mean() - mean) < 5 * math.sqrt(var / N)
    assert abs(values.var() / var - 1) < 0.1
    if kind == "uniform":
        assert values.min() >= -1.0 and values.max() <= 3.0
    if kind == "bernoulli":
        assert set(np.unique(values)) <= {0.0, 1.0}
    if kind == "normal":  # a symmetric, light-tailed shape: third and fourth standardized moments
        z = (values - mean) / math.sqrt(var)
        assert abs((z ** 3).mean()) < 0.15 and abs((z ** 4).mean() - 3) < 0.3


@pytest.mark.parametrize("layer", ["normal-static", "uniform-like", "bernoulli-static"])
def test_a_seed_gives_one_tensor_every_run_and_every_model(tmp_path, layer):
    first = _model(tmp_path, lambda b: LAYERS[layer](b, 99), "one")
    again = _model(tmp_path, lambda b: LAYERS[layer](b, 99), "two")
    other = _model(tmp_path, lambda b: LAYERS[layer](b, 100), "three")
    a = _draw(first)
    np.testing.assert_array_equal(a, _draw(first))
    np.testing.assert_array_equal(a, _draw(again))
    assert not np.array_equal(a, _draw(other))


def test_seed_minus_one_draws_fresh_values_each_run(tmp_path):
    model = _model(tmp_path, lambda b: LAYERS["uniform-static"](b, -1))
    assert not np.array_equal(_draw(model), _draw(model))


@pytest.mark.parametrize("case", ["std", "bounds", "prob", "shape"])
def test_bad_distribution_parameters_are_refused_at_load(tmp_path, case):
    add = {"std": lambda b: b.add_random_normal_static("r", "r", SHAPE, 0.0, -1.0, 1),
           "bounds": lambda b: b.add_random_uniform_like("r", "x", "r", 2.0, 1.0, 1),
           "prob": lambda b: b.add_random_bernoulli_static("r", "r", SHAPE, 1.5, 1),
           "shape": lambda b: b.add_random_bernoulli_static("r", "r", (3, 0), 0.5, 1)}[case]
    with pytest.raises(cm.CoreMLError) as caught:
        _draw(_model(tmp_path, add))
    assert "'r'" in str(caught.value)


def _categorical_model(tmp_path, shape, samples, is_logits, seed, temperature=1.0, eps=1e-10):
    b = builder({"x": shape}, ["y"], exact=True)
    b.add_categorical_distribution("c", "x", "y", samples, is_logits, eps, temperature, seed)
    return load(tmp_path, b)


@pytest.mark.parametrize("is_logits,temperature", [(True, 1.0), (True, 0.5), (False, 1.0), (False, 2.0)])
def test_categorical_draws_are_the_documented_stream(tmp_path, rng, is_logits, temperature):
    x = rng.standard_normal((2, 3, 5)) if is_logits else rng.uniform(0, 1, (2, 3, 5))
    x = x.astype(np.float32)
    x[0, 0, 1] = 0 if not is_logits else x[0, 0, 1]  # a category of probability 0 is never drawn
    samples, seed = 7, 2024
    got = _categorical_model(tmp_path, x.shape, samples, is_logits, seed, temperature).predict({"x": x})["y"]
    u = _documented_uniforms(seed, 6 * samples)
    expected = np.empty((2, 3, samples))
    for r, (i, j) in enumerate(np.ndindex(2, 3)):
        logits = [(float(v) if is_logits else math.log(float(v) + np.float32(1e-10))) / temperature for v in x[i, j]]
        weights = [math.exp(v - max(logits)) for v in logits]
        for k in range(samples):
            target, running = u[r * samples + k] * sum(weights), 0.0
            for c, w in enumerate(weights):
                running += w
                if running > target:
                    break
            expected[i, j, k] = c
    np.testing.assert_array_equal(got, expected)
    if not is_logits:
        assert not (got[0, 0] == 1).any()


def test_categorical_frequencies_match_the_probabilities(tmp_path):
    p = np.array([[0.1, 0.6, 0.3]], np.float32)
    draws = _categorical_model(tmp_path, p.shape, 20000, False, 5).predict({"x": p})["y"].reshape(-1)
    for c, prob in enumerate(p[0]):
        freq = (draws == c).mean()
        assert abs(freq - prob) < 5 * math.sqrt(prob * (1 - prob) / draws.size)


def test_categorical_refuses_a_zero_temperature_and_negative_probabilities(tmp_path):
    with pytest.raises(cm.CoreMLError, match="temperature"):
        _categorical_model(tmp_path, (2, 3), 4, True, 1, temperature=0.0)
    model = _categorical_model(tmp_path, (1, 3), 4, False, 1)
    with pytest.raises(cm.CoreMLError, match="failed"):
        model.predict({"x": np.array([[0.5, -0.1, 0.6]], np.float32)})
