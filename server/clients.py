"""Who a request comes from: the address of its client, behind the proxies this server trusts.

Used to limit a key per client (``KeyRecord.client_rate``: the demo key, issue 37). The rule:

- The client is the peer of the TCP connection, unless that peer is a *trusted proxy*: one of
  gunicorn's ``forwarded_allow_ips`` (``--forwarded-allow-ips``, or the environment variable
  ``FORWARDED_ALLOW_IPS``; default ``127.0.0.1,::1``: a balancer on the same machine; ``*``
  trusts every peer). uvicorn and gunicorn already trust these peers' forwarded headers; so
  does this.
- Behind a trusted proxy, the client is the right-most address of ``X-Forwarded-For`` that is
  not itself a trusted proxy (each proxy appends the address it got the request from; what a
  client wrote there itself stands to the left, so it is never taken while a trusted hop
  follows it). An entry that is not an IP address stops the walk: the hop that reported it is
  the client then. With every hop trusted, the farthest one is.
- SECURITY: an address is limited as a whole for IPv4 and by its /64 network for IPv6 (one
  subscriber's allocation: a client that changes addresses within it is still one client).
  A client of a trusted peer can name any address it likes: trust only proxies that append
  the address they see (HAProxy ``option forwardfor``, as ``deploy/haproxy.cfg`` does).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

#: What gunicorn trusts when nothing is set (its ``forwarded_allow_ips`` default).
DEFAULT_TRUSTED = ("127.0.0.1", "::1")

_Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class TrustedProxies:
    """The peers whose ``X-Forwarded-For`` is believed: gunicorn's ``forwarded_allow_ips``
    (addresses or networks, as a comma-separated string or a list; ``*`` for every peer)."""

    def __init__(self, spec: str | Iterable[str] = DEFAULT_TRUSTED) -> None:
        entries = [e.strip() for e in (spec.split(",") if isinstance(spec, str) else spec)]
        entries = [e for e in entries if e]
        self.everyone = "*" in entries
        try:
            self.networks = tuple(ipaddress.ip_network(e, strict=False) for e in entries if e != "*")
        except ValueError as exc:
            raise ValueError(f"trusted proxies: {exc} (addresses or networks, comma-separated, or *)") from None

    def trusts(self, address: _Address | None) -> bool:
        """Whether the hop at ``address`` is trusted (a peer that is no IP address, e.g. a UNIX
        socket, is: gunicorn treats it so)."""
        if address is None or self.everyone:
            return True
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return any(address in network for network in self.networks)


def _address(text: str | None) -> _Address | None:
    try:
        return ipaddress.ip_address((text or "").strip())
    except ValueError:
        return None


def _limited_as(address: _Address | None, text: str | None) -> str:
    """The name a client is limited under: an IPv4 address, an IPv6 /64, or the peer as given."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    if address is not None:
        return str(address)
    return text or "unknown"


def client_address(peer: str | None, forwarded_for: str | None, trusted: TrustedProxies) -> str:
    """The client a request comes from, as it is limited (see the module's docstring).

    ``peer``: the connection's peer (``req.remote_addr``); ``forwarded_for``: the request's
    ``X-Forwarded-For`` (repeated headers joined by commas, as servers hand them over).
    """
    hop = _address(peer)
    if not forwarded_for or not trusted.trusts(hop):
        return _limited_as(hop, peer)
    hop_text = peer
    for entry in reversed(forwarded_for.split(",")):
        address = _address(entry)
        if address is None:
            break  # not an address: the hop that reported it is the client we know
        hop, hop_text = address, entry.strip()
        if not trusted.trusts(address):
            break
    return _limited_as(hop, hop_text)
