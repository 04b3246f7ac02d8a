"""The READMEs' Python examples run as written (in a temporary folder)."""

import re

import pytest


def blocks(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S)


@pytest.mark.parametrize("readme,index", [("README.md", 0), ("python/README.md", 0)])
def test_readme_example_runs(repo, tmp_path, monkeypatch, readme, index):
    monkeypatch.chdir(tmp_path)
    code = blocks(repo / readme)[index]
    exec(compile(code, f"{readme} example {index}", "exec"), {})
    assert (tmp_path / "ids.ccf").is_file()
