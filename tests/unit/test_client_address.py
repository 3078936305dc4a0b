"""Which address a join is counted under: the peer's, or X-Forwarded-For's entry from a trusted proxy only."""
from explorer.classroom.address import client_address


def test_direct_connection_uses_the_peer_and_ignores_forwarded_headers():
    assert client_address("192.0.2.10") == "192.0.2.10"
    assert client_address("192.0.2.10", ["203.0.113.5"]) == "192.0.2.10"   # anyone can send the header
    assert client_address("2001:db8::7") == "2001:db8::7"
    for unknown in (None, "", "127.0.0.1", "::1", "not an address"):
        assert client_address(unknown) is None   # loopback is the teacher's machine or an untrusted proxy


def test_behind_trusted_proxies_the_entry_they_wrote_counts_not_the_clients_own():
    # The client sent "X-Forwarded-For: 6.6.6.6" itself; HAProxy appended the address it saw.
    assert client_address("127.0.0.1", ["6.6.6.6, 10.0.0.23"], trusted=1) == "10.0.0.23"
    assert client_address("127.0.0.1", ["6.6.6.6", "10.0.0.23"], trusted=1) == "10.0.0.23"   # repeated header
    assert client_address("10.0.0.2", ["6.6.6.6, 10.0.0.23, 10.0.0.1"], trusted=2) == "10.0.0.23"
    assert client_address("127.0.0.1", [], trusted=1) is None   # no header: the peer is the proxy, not a student
    assert client_address("127.0.0.1", ["10.0.0.23"], trusted=2) is None   # fewer hops than trusted proxies
    assert client_address("127.0.0.1", ["garbage"], trusted=1) is None
    assert client_address("127.0.0.1", ["127.0.0.1"], trusted=1) is None
