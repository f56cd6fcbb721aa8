"""`--rdzv-endpoint` is HOST:PORT or [IPv6]:PORT, strictly: a bracket that does not close, text after it, or a
bracketed name that is no IPv6 address is exit 2, never a host of ':' (review)."""

from __future__ import annotations

import pytest

from envdoctor.errors import InputError
from envdoctor.fleet.endpoint import parse_endpoint


@pytest.mark.parametrize("text, expected", [
    ("node0:29500", ("node0", 29500)),
    ("[::1]:29500", ("::1", 29500)),
    ("[fe80::1%eth0]:1", ("fe80::1%eth0", 1)),
    (" 10.0.0.1:65535 ", ("10.0.0.1", 65535)),
])
def test_good_endpoints(text, expected):
    assert parse_endpoint(text) == expected


@pytest.mark.parametrize("text", ["[::1", "[::1]", "[::1]x:5", "[]:1", "[host]:5", "a]b:1", "host", "host:",
                                  "host:0", "host:65536", "host:\u0663", "ho st:5", ":5", "fe80::1", "::1:29500"])
def test_bad_endpoints_are_input_errors(text):
    with pytest.raises(InputError, match="expected HOST:PORT"):
        parse_endpoint(text)


def test_a_bare_ipv6_master_addr_is_bracketed():
    from envdoctor.fleet.endpoint import resolve_rendezvous

    r = resolve_rendezvous(2, 0, None, {"MASTER_ADDR": "fe80::1", "MASTER_PORT": "29500"})
    assert (r.host, r.port) == ("fe80::1", 29500)
