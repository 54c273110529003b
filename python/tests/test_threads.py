"""One Model run from 4 Python threads at once (the Model's runtime pool, GIL released during
runs) gives results identical to the same runs made one after another."""
import threading

import numpy as np

import flatrt
from conftest import zoo_model

THREADS = 4
RUNS = 6


def run_threads(m, feeds_of, n_threads=THREADS, runs=RUNS):
    results = {}
    errors = []
    start = threading.Barrier(n_threads)

    def worker(t):
        try:
            start.wait()
            for r in range(runs):
                results[(t, r)] = m.run(feeds_of(t, r))
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    return results


def check_identical(name, make_feeds):
    path, feeds, _ = zoo_model(name)
    m = flatrt.Model(path)
    feeds_of = lambda t, r: make_feeds(feeds, t, r)  # noqa: E731
    alone = flatrt.Model(path)  # another Model, run from this thread only
    serial = {(t, r): alone.run(feeds_of(t, r)) for t in range(THREADS) for r in range(RUNS)}
    got = run_threads(m, feeds_of)
    assert got.keys() == serial.keys()
    for key, outs in serial.items():
        for out_name, ref in outs.items():
            assert np.array_equal(got[key][out_name], ref), (key, out_name)
    stats = m.pool_stats()
    assert stats["runs"] == THREADS * RUNS and stats["timeouts"] == 0
    assert 1 <= stats["peak"] <= THREADS, stats  # one runtime per concurrent caller at most
    return stats


def scaled(feeds, t, r):
    return {k: (v * (1 + 0.25 * t + 0.125 * r)).astype(v.dtype) for k, v in feeds.items()}


def test_threads_resnet18_identical():
    stats = check_identical("resnet18", scaled)
    # a run of resnet18 takes milliseconds with the GIL released, so the other threads enter
    # run() meanwhile and the pool holds more than one runtime at once
    assert stats["peak"] >= 2, stats


def test_threads_deep_wide_batches():
    # each thread its own batch size: the pool's runtimes reshape independently
    def feeds_of(feeds, t, r):
        return {k: np.repeat(v, t + 1, axis=0) * (1 + r) for k, v in feeds.items()}
    check_identical("deep_wide", feeds_of)


def test_threads_bert4_identical():
    def feeds_of(feeds, t, r):
        ids = (feeds["input_ids"] + 7 * t + r) % 1000
        return dict(feeds, input_ids=ids.astype(np.int64))
    check_identical("bert4", feeds_of)


def test_threads_bounded_pool_and_errors():
    path, feeds, refs = zoo_model("mlp")
    m = flatrt.Model(path, max_runtimes=2)
    bad = {"input": np.zeros((1, 3), np.float32)}  # wrong shape: every run fails cleanly

    def feeds_of(t, r):
        return bad if (t + r) % 3 == 0 else feeds

    results, errors = {}, []

    def worker(t):
        for r in range(RUNS):
            try:
                results[(t, r)] = m.run(feeds_of(t, r))["output"]
            except flatrt.Error as e:
                errors.append((t, r, e.status))

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    expected_bad = {(t, r) for t in range(THREADS) for r in range(RUNS) if (t + r) % 3 == 0}
    assert {(t, r) for t, r, _ in errors} == expected_bad
    assert all(s != flatrt.FRT_ERR_TIMEOUT for _, _, s in errors)
    for out in results.values():
        np.testing.assert_array_equal(out, results[next(iter(results))])
    assert m.pool_stats()["peak"] <= 2
