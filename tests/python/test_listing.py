"""``ccbench list`` formatting, with a stand-in core registry of the documented shape."""

import pytest

from ccbench import _core, listing

REGISTRY = {
    "controllers": [{"name": "newreno", "aliases": ["reno"], "summary": "RFC 5681 AIMD",
                     "params": [{"key": "beta", "type": "float", "default": "0.5"}]}],
    "receivers": [{"name": "tcp", "aliases": [], "summary": "SACK receiver", "params": []}],
    "queues": [{"name": "droptail", "aliases": [], "summary": "FIFO", "params": []}],
    "topologies": [{"name": "dumbbell", "aliases": [], "summary": "[bottleneck]", "params": []}],
}


@pytest.fixture
def core_registry(monkeypatch):
    monkeypatch.setattr(_core, "registry", lambda: REGISTRY, raising=False)


def test_family_lists_names_aliases_and_params(core_registry):
    text = listing.listing("controllers")
    assert text.splitlines()[0] == "controllers:"
    assert "newreno (reno)" in text and "RFC 5681 AIMD" in text
    assert "beta: float = 0.5" in text


def test_all_families_in_order(core_registry):
    text = listing.listing()
    starts = [text.index(f"{family}:") for family in listing.FAMILIES]
    assert starts == sorted(starts)
    assert "dumbbell" in text and "abe-fig2" in text


def test_empty_family_says_so(monkeypatch):
    monkeypatch.setattr(listing, "_core_entries", lambda family: [])
    assert listing.listing("receivers") == "receivers:\n  (none yet)"


def test_receivers_list_rledbat():
    assert listing.listing("receivers").splitlines()[1].startswith("  rledbat")
