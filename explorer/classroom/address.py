"""Which client address a request came from, how the store keeps it, and how long it waits after wrong codes.

A direct connection's peer address is the client's. Behind proxies the peer is the last proxy, and the client is
in ``X-Forwarded-For``: each proxy appends the address it saw, so with ``trusted`` proxies in front the client's
address is the ``trusted``-th entry from the right. Entries further left were written by the client itself and can
say anything: they are never used. A loopback address is the teacher's own machine or an untrusted local proxy,
never a student: it is not a client address here.
"""
from __future__ import annotations

import hashlib
import ipaddress
from collections.abc import Iterable

from .errors import BadInput

WRONG_FREE_TRIES, WRONG_FIRST_WAIT_S, WRONG_LONGEST_WAIT_S = 12, 10.0, 300.0  # per client address, all sessions
WRONG_FORGET_S = 900.0  # an address's wrong codes are forgotten 15 minutes after its last one


def _ip(text: str | None) -> str | None:
    """A valid, non-loopback IP address in canonical form, else None."""
    try:
        ip = ipaddress.ip_address((text or "").strip().removeprefix("[").split("]")[0])
    except ValueError:
        return None
    return None if ip.is_loopback else str(ip)


def client_address(peer: str | None, forwarded_for: Iterable[str] = (), trusted: int = 0) -> str | None:
    """The client's address, or None when it is unknown.

    peer: the connection's remote address; forwarded_for: every X-Forwarded-For header value, in order;
    trusted: how many proxies in front of the app a deployer vouches for ($EXPLORER_TRUSTED_PROXIES).
    With no trusted proxy the headers are ignored (anyone can send them)."""
    if trusted <= 0:
        return _ip(peer)
    hops = [h.strip() for value in forwarded_for for h in value.split(",") if h.strip()]
    return _ip(hops[-trusted]) if len(hops) >= trusted else None


def address_hash(address: object) -> str:
    """A client address as the store keeps it: hashed, so the store never holds it as readable text."""
    if not isinstance(address, str) or not address or len(address) > 200:
        raise BadInput("A client address must be a non-empty text of at most 200 characters.")
    return hashlib.sha256(b"explorer-address:" + address.encode()).hexdigest()[:32]


def wait_after(tries: int, free: int, first_s: float = WRONG_FIRST_WAIT_S,
               longest_s: float = WRONG_LONGEST_WAIT_S) -> float:
    """Seconds to wait after ``tries`` wrong codes: none for the first ``free - 1``, then first_s doubling, capped."""
    return min(first_s * 2 ** (tries - free), longest_s) if tries >= free else 0.0
