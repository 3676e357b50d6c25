

def test_seeds_verdict_is_two_pytorch_stds(tmp_path):
    """``--compare-seeds``: |mean(MindSpore) - mean(PyTorch)| <= 2 x PyTorch's sample std over seeds."""
    torch_values = [1.0, 1.2, 1.4]  # mean 1.2, std 0.2
    ok = compare.seeds_verdict(torch_values, [1.5, 1.6, 1.45])  # mean 1.5167: 1.58 std away
    assert ok["ok"] and ok["torch_std"] == pytest.approx(0.2) and ok["limit"] == pytest.approx(0.4)
    assert ok["times_std"] == pytest.approx((1.5166667 - 1.2) / 0.2, rel=1e-5)
    bad = compare.seeds_verdict(torch_values, [1.7, 1.6, 1.65])  # 2.25 std away
    assert not bad["ok"]
    # a seed that changes nothing: the means must agree to 1e-5
    assert compare.seeds_verdict([2.0, 2.0], [2.0 + 1e-6, 2.0])["ok"]
    assert not compare.seeds_verdict([2.0, 2.0], [2.001, 2.0])["ok"]
    assert compare.final_metric(list(range(10))) == 8.5  # mean of the last 10 // 5 = 2
    result = {"command": ["net.py"], "steps": 3, "seeds": [1, 2, 3], "last_k": 1, "verdict": bad,
              "losses_torch": [[2, 1.5, v] for v in torch_values], "losses_mindspore": [[2, 1.5, v] for v in bad["mindspore"]]}
    text = compare.format_seeds(result)
    assert "[FAIL]   |mean diff| 0.45 > 2 x PyTorch's std over seeds = 0.4 (2.25x the std)" in text
    assert text.rstrip().endswith("outside PyTorch's spread")
    compare.plot_seeds(result, str(tmp_path / "seeds.png"))
    assert (tmp_path / "seeds.png").stat().st_size > 10_000
