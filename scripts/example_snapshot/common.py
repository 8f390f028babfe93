"""Constants of the example cluster and deterministic helpers (ids, addresses, timestamps)."""

from __future__ import annotations

import hashlib
import random
import uuid
from datetime import UTC, datetime, timedelta

SEED = 20261120

REGION = "eu-west-1"
ZONES = ("eu-west-1a", "eu-west-1b", "eu-west-1c")
#: third octet ranges of each zone's /19 subnet in the VPC 10.20.0.0/16
SUBNETS = {"eu-west-1a": (32, 63), "eu-west-1b": (64, 95), "eu-west-1c": (96, 127)}
KUBELET_VERSION = "v1.34.1-eks-3025e55"
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
NODEGROUP = "example.com/nodegroup"
DUMP_TIME = datetime(2026, 11, 20, 14, 45, 31, tzinfo=UTC)
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def rand_hex(n: int, rng: random.Random) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def rand_uid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def ts(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_ts(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def later(stamp: str, seconds: float) -> str:
    return ts(parse_ts(stamp) + timedelta(seconds=seconds))


def dt(day: int, hour: int, minute: int, second: int = 0, month: int = 11) -> datetime:
    return datetime(2026, month, day, hour, minute, second, tzinfo=UTC)


class Addresses:
    """Unique node and pod IPs in each zone's subnet (the VPC CNI gives pods VPC addresses)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def take(self, zone: str) -> str:
        lo, hi = SUBNETS[zone]
        while True:
            ip = f"10.20.{self.rng.randint(lo, hi)}.{self.rng.randint(4, 254)}"
            if ip not in self.used:
                self.used.add(ip)
                return ip
