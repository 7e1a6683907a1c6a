"""StartInterrupts: a Ctrl-C while a lab server starts is never lost and never lands in
the middle of creating it. Real SIGINTs to this process, no server needed."""

from __future__ import annotations

import signal
import sys
import threading

import pytest

from innoflush.lab.server.ctrl_c import StartInterrupts


def spin() -> None:
    # bytecodes for the interpreter to run the pending Python-level handler at
    for _ in range(10_000):
        pass


class PressedInDel:
    """Ctrl-C arriving while a __del__ runs, as the Docker SDK's and PyMySQL's objects do."""

    def __del__(self) -> None:
        signal.raise_signal(signal.SIGINT)
        spin()


@pytest.fixture
def dropped(monkeypatch):
    seen: list[type] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append(u.exc_type))
    return seen


def test_cpython_drops_a_keyboardinterrupt_raised_in_del(dropped):
    # why StartInterrupts exists: with the default handler the press is gone
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    PressedInDel()
    spin()
    assert dropped == [KeyboardInterrupt]


def test_a_dropped_press_is_raised_again_by_check(dropped):
    with StartInterrupts() as interrupts:
        PressedInDel()
        spin()
        # the first raise was dropped (signals.Interrupted is a KeyboardInterrupt) ...
        assert len(dropped) == 1 and issubclass(dropped[0], KeyboardInterrupt)
        assert interrupts.pressed                 # ... the press was recorded
        with pytest.raises(KeyboardInterrupt):
            interrupts.check()


def test_a_press_raises_at_once():
    reached = False
    with StartInterrupts() as interrupts, pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)
        spin()
        reached = True
    assert not reached
    assert interrupts.pressed


def test_no_press_no_raise():
    with StartInterrupts() as interrupts:
        spin()
        interrupts.check()
        with interrupts.deferred():
            spin()
    assert not interrupts.pressed


def test_deferred_raises_when_the_block_ends():
    created = None
    with StartInterrupts() as interrupts:
        with pytest.raises(KeyboardInterrupt), interrupts.deferred():
            signal.raise_signal(signal.SIGINT)
            spin()
            created = "container"                 # assigned before the interrupt
        assert created == "container"
        # a second press is the cleanup's: recorded, never raised into it ...
        signal.raise_signal(signal.SIGINT)
        spin()
        # ... while a step of the work still stops on the first
        with pytest.raises(KeyboardInterrupt):
            interrupts.check()


def test_restores_the_default_handler():
    with StartInterrupts():
        assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with pytest.raises(RuntimeError), StartInterrupts():
        raise RuntimeError("a failed start")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_callers_own_handler_is_kept():
    calls = []

    def own(signum, frame):
        calls.append(signum)

    old = signal.signal(signal.SIGINT, own)
    try:
        with StartInterrupts() as interrupts:
            assert signal.getsignal(signal.SIGINT) is own
            signal.raise_signal(signal.SIGINT)
            spin()
            interrupts.check()                    # not ours: nothing recorded
        assert calls == [signal.SIGINT]
    finally:
        signal.signal(signal.SIGINT, old)


def test_off_the_main_thread_it_stands_aside():
    errors = []

    def run():
        try:
            with StartInterrupts() as interrupts:
                interrupts.check()
                with interrupts.deferred():
                    pass
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert errors == []
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
