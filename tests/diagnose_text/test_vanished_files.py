"""`envdoctor diagnose DIR`: a file under the folder that is gone when its turn comes is skipped with a note, and
the rest is read; a file named on the command line that is missing is still exit 2 (review)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from envdoctor.errors import InputError
from envdoctor.evidence import inputs
from envdoctor.settings import Settings
from envdoctor.usecases.diagnose_text import diagnose_text

DRIVER = "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU\n"


@pytest.fixture(scope="module")
def know():
    return Settings.from_env({k: v for k, v in os.environ.items() if not k.startswith("ENVDOCTOR_")}).knowledge()


def test_a_file_removed_while_the_folder_is_read_is_skipped_with_a_note(tmp_path: Path, know, monkeypatch) -> None:
    (tmp_path / "a.log").write_text("starting\n")
    (tmp_path / "b.log").write_text(DRIVER)
    real_expand = inputs.expand

    def expand_then_remove(paths):  # the folder is listed, then a.log goes before it is opened
        found = real_expand(paths)
        (tmp_path / "a.log").unlink()
        return found

    monkeypatch.setattr(inputs, "expand", expand_then_remove)
    result = diagnose_text([str(tmp_path)], know)
    assert result.findings and result.findings[0].id == "TXT-NO-NVIDIA-DRIVER"
    assert result.inputs == [str(tmp_path / "b.log")]
    assert result.skipped == [f"{tmp_path / 'a.log'}: removed while its folder was read; skipped"]
    assert result.to_json()["skipped"] == result.skipped


def test_a_named_file_that_is_missing_is_still_an_input_error(tmp_path: Path) -> None:
    item = inputs.LogInput(str(tmp_path / "gone.log"), str(tmp_path / "gone.log"))
    with pytest.raises(InputError) as err:
        inputs.open_log(item)
    assert not isinstance(err.value, inputs.Vanished)


def test_a_walked_file_replaced_by_a_fifo_is_skipped_not_read(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    os.mkfifo(path)
    with pytest.raises(inputs.Vanished):
        inputs.open_log(inputs.LogInput(str(path), str(path), walked=True))


def test_nccl_diagnose_dir_reads_the_rest_when_a_file_vanishes(tmp_path: Path, monkeypatch) -> None:
    from envdoctor.nccl import diagnose as nccl_diagnose

    (tmp_path / "a.log").write_text("starting\n")
    (tmp_path / "b.log").write_text("host:1:2 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n")
    real_expand = nccl_diagnose.expand

    def expand_then_remove(paths):
        found = real_expand(paths)
        (tmp_path / "a.log").unlink()
        return found

    monkeypatch.setattr(nccl_diagnose, "expand", expand_then_remove)
    report = nccl_diagnose.diagnose_paths([str(tmp_path)])
    assert report.inputs == [str(tmp_path / "b.log")]
