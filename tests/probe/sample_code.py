"""Code for the probe's unit tests; its module is mapped to the group ``sample`` by the
``sample_group`` fixture, so that what the tests count is only what runs here."""

from __future__ import annotations

import asyncio
import copy
import sys
from types import FrameType


def plain(x: int) -> int:
    return len([x]) + len([x])  # two C calls


async def three_steps() -> int:
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    return plain(1)


def sync_work() -> int:
    return plain(2) + plain(3)


class FrameInDeepcopy:
    """``copy.deepcopy`` (a standard-library helper) calls back into this module."""

    frame: FrameType | None = None

    def __deepcopy__(self, memo: dict) -> FrameInDeepcopy:
        FrameInDeepcopy.frame = sys._getframe(1)  # copy.deepcopy's own frame
        return self


def deepcopy_frame() -> FrameType:
    copy.deepcopy(FrameInDeepcopy())
    assert FrameInDeepcopy.frame is not None
    return FrameInDeepcopy.frame


def inner() -> FrameType:
    return sys._getframe()


def root() -> FrameType:
    return inner()


def spin(seconds: float) -> int:
    import time

    end, n = time.perf_counter() + seconds, 0
    while time.perf_counter() < end:
        n += 1
    return n
