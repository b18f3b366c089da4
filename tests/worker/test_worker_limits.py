"""The `[limits]` section of komputer.toml: sizes, defaults, and the errors a typo gets."""

from __future__ import annotations

from pathlib import Path

import pytest

from kshell.server.config import load_config
from kshell.worker.limits import WorkerLimits, parse_size, size_text


@pytest.mark.parametrize(("text", "value"), [
    ("512M", 512 << 20), ("2G", 2 << 30), ("256K", 256 << 10), ("1.5G", 3 << 29), ("64KiB", 64 << 10),
    ("1000", 1000), (4096, 4096),
])
def test_sizes_are_bytes_or_binary_units(text: str | int, value: int) -> None:
    assert parse_size(text, "x") == value


def test_a_size_that_is_not_one_says_so() -> None:
    with pytest.raises(ValueError, match="'lots' is not a size"):
        parse_size("lots", "[limits].session_memory")


def test_size_text_names_whole_units() -> None:
    assert [size_text(n) for n in (512 << 20, 2 << 30, 192 << 20, 1000)] == ["512 MiB", "2 GiB", "192 MiB", "1000 bytes"]


def test_the_limits_section_is_read_with_defaults_for_the_rest(tmp_path: Path) -> None:
    toml = tmp_path / "komputer.toml"
    toml.write_text('[limits]\nsession_memory = "256M"\nsftp_read = "64K"\nsftp_handles = 100\n')
    limits = load_config(toml).limits
    assert (limits.session_memory, limits.sftp_read, limits.sftp_handles) == (256 << 20, 64 << 10, 100)
    assert limits.agent_memory == WorkerLimits().agent_memory


@pytest.mark.parametrize(("body", "message"), [
    ("session_memroy = 1", "unknown setting 'session_memroy'"),
    ('sftp_read = "8M"', "sftp_read and sftp_write from 1K to 4M"),
    ("sftp_handles = 0", "sftp_handles >= 1"),
    ("max_workers = 0", "max_workers >= 1"),
    ("session_cpu = -1", "session_cpu >= 0"),
    ("agent_jobs = 0", "agent_jobs >= 1"),
    ("agent_cpu_max = -2", r"agent_cpu_max is a number of CPUs, 0 \(no cap\) or -1"),
])
def test_a_bad_limit_is_an_error_naming_it(tmp_path: Path, body: str, message: str) -> None:
    toml = tmp_path / "komputer.toml"
    toml.write_text(f"[limits]\n{body}\n")
    with pytest.raises(ValueError, match=message):
        load_config(toml)


def test_the_sample_config_holds_the_defaults() -> None:
    """systemd/komputer.toml documents every limit with its default value."""
    sample = load_config(Path(__file__).resolve().parents[2] / "systemd" / "komputer.toml")
    assert sample.limits == WorkerLimits()
