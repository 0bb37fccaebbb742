"""``chronorank curve``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from chronorank.cli import main


def test_prints_curve_with_half_life(capsys):
    assert main(["curve", "weibull(half_life_days=90, shape=2)"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "weibull(half_life_days=90, shape=2)  half-life=90 days"
    assert any(line.split()[:2] == ["90", "0.5000"] and "<- half-life" in line for line in lines)


def test_name_and_key_value_words(capsys):
    assert main(["curve", "exponential", "half_life_days=30", "--width", "10"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("exponential(half_life_days=30)  half-life=30 days")
    assert "0.5000  #####  <- half-life" in out


def test_default_kernel_and_max_age(capsys):
    assert main(["curve", "--max-age", "360"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("exponential(half_life_days=180)")
    ages = [float(line.split()[0]) for line in out.splitlines()[2:]]
    assert ages[0] == 0 and ages[-1] == 360 and 180 in ages


def test_json_output(capsys):
    assert main(["curve", "linear(zero_at=100)", "--ages", "0,50,100", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload == {"spec": "linear(zero_at=100)", "half_life_days": 50.0,
                       "ages": [0.0, 50.0, 100.0], "weights": [1.0, 0.5, 0.0]}


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["curve", "nosuchkernel"], "unknown kernel 'nosuchkernel'"),
        (["curve", "exponential(half_life=3)"], "unknown parameter 'half_life'"),
        (["curve", "exponential(half_life_days=-3)"], "half_life_days=-3"),
        (["curve", "exp", "--max-age", "0"], "--max-age"),
        (["curve", "exp", "--ages", "a,b"], "--ages"),
    ],
)
def test_errors_go_to_stderr_with_exit_2(capsys, argv, fragment):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert fragment in captured.err


def test_png(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    target = tmp_path / "curve.png"
    assert main(["curve", "cliff(half_life_days=60)", "--png", str(target)]) == 0
    assert target.read_bytes()[:4] == b"\x89PNG"
    assert "wrote" in capsys.readouterr().err


def test_png_without_matplotlib(tmp_path, capsys, monkeypatch):
    import chronorank.kernels.curve as curve_mod
    from chronorank.errors import MissingDependency

    def missing(module, extra, package=None):
        raise MissingDependency(f'{module!r} is needed. Install it with: pip install "chronorank[{extra}]"')

    monkeypatch.setattr(curve_mod, "require", missing)
    assert main(["curve", "exp", "--png", str(tmp_path / "x.png")]) == 2
    assert 'pip install "chronorank[plot]"' in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()


def test_help_in_a_subprocess():
    proc = subprocess.run(
        [sys.executable, "-m", "chronorank", "curve", "--help"],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0
    assert "--png FILE" in proc.stdout and "SPEC" in proc.stdout
