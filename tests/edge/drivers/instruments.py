"""Instrument simulators on the far end of a pseudo-terminal.

The driver under test opens the pty's slave side by name with pyserial, exactly as it
opens /dev/ttyUSB0 in the field; a thread here reads the master side and answers as an
SDI-12 sensor, a Modbus RTU slave or an autosampler would, bytes and all. Faults are queued
per reply (``faults.append("garbage")``) so a test can break one exchange and check that
the next one works again.
"""

from __future__ import annotations

import os
import select
import struct
import threading
import tty
from typing import Callable


class PtyInstrument:
    """A thread answering on the master side of a fresh pty; ``port`` is the slave's path."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.port = os.ttyname(self.slave)
        self.received: list[bytes] = []  # every request, as parsed
        self.faults: list[str] = []       # consumed one per reply
        self._buf = b""
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=type(self).__name__, daemon=True)

    def __enter__(self) -> "PtyInstrument":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        os.close(self.master)
        os.close(self.slave)

    def send(self, data: bytes) -> None:
        with self._lock:
            os.write(self.master, data)

    def send_later(self, delay_s: float, data: bytes) -> None:
        t = threading.Timer(delay_s, lambda: None if self._stop.is_set() else self.send(data))
        t.daemon = True
        t.start()

    def next_fault(self) -> str | None:
        return self.faults.pop(0) if self.faults else None

    def _run(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self.master], [], [], 0.02)
            if not ready:
                continue
            try:
                data = os.read(self.master, 1024)
            except OSError:
                return
            self._buf += data
            self._buf = self.feed(self._buf)

    def feed(self, buf: bytes) -> bytes:
        """Consume complete requests from ``buf``; return what is left."""
        raise NotImplementedError


# -- SDI-12 ------------------------------------------------------------------------------


class Sdi12Sensor:
    """One sensor's state on the simulated bus."""

    def __init__(self, values: list[float], wait_s: int = 0, service_request_s: float | None = None,
                 per_d: int = 9, ident: str = "14CAMPBELLCLARV10100SN1234", announce: int | None = None):
        self.values = values
        self.wait_s = wait_s
        self.service_request_s = service_request_s  # None: never sends one; 0: with the reply
        self.per_d = per_d                          # values per aDn! reply
        self.ident = ident
        self.announce = announce                    # values announced by aM!, if not len(values)


def sdi12_value(v: float) -> str:
    return ("+" if v >= 0 else "-") + f"{abs(v):g}"


class Sdi12Bus(PtyInstrument):
    """Sensors at their addresses on one SDI-12 line.

    Faults (one reply each): ``silent``, ``garbage`` (non-ASCII bytes), ``malformed``
    (a value list that is not one), ``wrong_address`` (a reply from another address),
    ``no_crlf`` (a reply cut before CR LF). ``dead = True``: nobody answers any more.
    ``echo = True``: the line echoes every command, as a one-wire adapter does.
    """

    def __init__(self, sensors: dict[str, Sdi12Sensor]):
        super().__init__()
        self.sensors = sensors
        self.dead = False
        self.echo = False

    @property
    def commands(self) -> list[str]:
        return [c.decode("ascii") for c in self.received]

    def feed(self, buf: bytes) -> bytes:
        while b"!" in buf:
            cmd, buf = buf.split(b"!", 1)
            cmd = cmd.lstrip(b"\x00")  # a break may read as NUL
            self.received.append(cmd + b"!")
            self.answer(cmd.decode("ascii", "replace"))
        return buf

    def answer(self, cmd: str) -> None:
        if self.echo:
            self.send(cmd.encode() + b"!")
        if self.dead or not cmd:
            return
        a, body = cmd[0], cmd[1:]
        sensor = self.sensors.get(a)
        if sensor is None:
            return  # nobody at that address: silence, as on a real bus
        reply = self.reply(a, body, sensor)
        if reply is None:
            return
        fault = self.next_fault()
        if fault == "silent":
            return
        if fault == "garbage":
            self.send(b"\xff\xfe\x13\x80#\r\n")
            return
        if fault == "malformed":
            reply = a + "+1.2.3x"
        elif fault == "wrong_address":
            reply = ("1" if a != "1" else "2") + reply[1:]
        elif fault == "no_crlf":
            self.send(reply.encode())
            return
        self.send(reply.encode() + b"\r\n")

    def reply(self, a: str, body: str, s: Sdi12Sensor) -> str | None:
        if body == "":
            return a
        if body == "I":
            return a + s.ident
        n = len(s.values) if s.announce is None else s.announce
        if body.startswith("M"):
            if s.wait_s and s.service_request_s == 0:      # ready at once: both lines in one write
                return f"{a}{s.wait_s:03d}{n}\r\n{a}"
            if s.wait_s and s.service_request_s is not None:
                self.send_later(s.service_request_s, f"{a}\r\n".encode())
            return f"{a}{s.wait_s:03d}{n}"
        if body.startswith("C"):
            return f"{a}{s.wait_s:03d}{n:02d}"
        if body.startswith("D") and body[1:].isdigit():
            i = int(body[1:])
            chunk = s.values[i * s.per_d:(i + 1) * s.per_d]
            return a + "".join(sdi12_value(v) for v in chunk)
        if body.startswith("R"):
            return a + "".join(sdi12_value(v) for v in s.values)
        return None


# -- Modbus RTU --------------------------------------------------------------------------


def crc16_modbus(data: bytes) -> int:
    """CRC-16/MODBUS: reflected polynomial 0xA001, initial value 0xFFFF."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


def with_crc(frame: bytes) -> bytes:
    return frame + struct.pack("<H", crc16_modbus(frame))  # CRC goes low byte first


class ModbusSlaves(PtyInstrument):
    """Modbus RTU slaves on one RS-485 line answering function 3 (holding) and 4 (input).

    ``registers[slave][(function, address)] = 16-bit value``. Faults (one reply each):
    ``silent``, ``bad_crc``, ``garbage``, ``wrong_slave``, ``short`` (reply cut in half).
    A register that is not there gets exception 02 (illegal data address), as a real slave.
    """

    def __init__(self, registers: dict[int, dict[tuple[int, int], int]]):
        super().__init__()
        self.registers = registers
        self.bad_requests = 0

    def feed(self, buf: bytes) -> bytes:
        while len(buf) >= 8:
            frame, buf = buf[:8], buf[8:]
            if struct.unpack("<H", frame[6:])[0] != crc16_modbus(frame[:6]):
                self.bad_requests += 1
                return b""  # resynchronise on the next request
            self.received.append(frame)
            self.answer(frame)
        return buf

    def answer(self, frame: bytes) -> None:
        slave, function, address, count = struct.unpack(">BBHH", frame[:6])
        regs = self.registers.get(slave)
        if regs is None:
            return  # another slave's request
        if function not in (3, 4):
            reply = with_crc(bytes((slave, function | 0x80, 1)))
        else:
            try:
                values = [regs[(function, address + i)] for i in range(count)]
                reply = with_crc(struct.pack(">BBB", slave, function, 2 * count)
                                 + b"".join(struct.pack(">H", v) for v in values))
            except KeyError:
                reply = with_crc(bytes((slave, function | 0x80, 2)))
        fault = self.next_fault()
        if fault == "silent":
            return
        if fault == "bad_crc":
            reply = reply[:-2] + bytes((reply[-2] ^ 0xFF, reply[-1]))
        elif fault == "garbage":
            reply = bytes((0xFF, 0x00, 0x13, 0x37)) * 3
        elif fault == "wrong_slave":
            reply = with_crc(bytes(((slave % 247) + 1,)) + reply[1:-2])
        elif fault == "short":
            reply = reply[: len(reply) // 2]
        self.send(reply)


def float_registers(value: float, order: str) -> tuple[int, int]:
    """A float32 as the two registers a device with byte order ``order`` sends."""
    a, b, c, d = struct.pack(">f", value)
    byte = {"A": a, "B": b, "C": c, "D": d}
    r = [byte[ch] for ch in order]
    return (r[0] << 8) | r[1], (r[2] << 8) | r[3]


# -- a line-oriented serial device (autosampler) ------------------------------------------


class LineDevice(PtyInstrument):
    """Answers each request ending in ``terminator`` with ``respond(request) -> bytes | None``."""

    def __init__(self, respond: Callable[[bytes], bytes | None], terminator: bytes = b"\r"):
        super().__init__()
        self.respond = respond
        self.terminator = terminator

    def feed(self, buf: bytes) -> bytes:
        while self.terminator in buf:
            req, buf = buf.split(self.terminator, 1)
            self.received.append(req)
            reply = self.respond(req)
            if reply is not None:
                self.send(reply)
        return buf


def gone(ser) -> None:
    """Make an open pyserial port fail at the OS level, as when its USB adapter is pulled:
    its descriptor now points at a read-only file (writes: EBADF; termios calls: ENOTTY)."""
    fd = os.open(os.devnull, os.O_RDONLY)
    os.dup2(fd, ser.fd)
    os.close(fd)



