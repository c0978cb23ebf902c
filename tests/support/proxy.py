"""A TCP forwarder on a free loopback port whose link a test can cut: while cut, every byte
either way is dropped (no FIN, no RST: the peers hear nothing, as when a cellular link goes
dark); when the link comes back the connections that lost bytes are closed, as their TCP
would have given up, and new ones are forwarded again."""

from __future__ import annotations

import select
import socket
import threading

from tests.support.servers import free_port


class CuttableLink:
    def __init__(self, target_port: int, host: str = "127.0.0.1"):
        self.target = (host, target_port)
        self.port = free_port()
        self._cut = threading.Event()
        self._stop = threading.Event()
        self._conns: list[tuple[socket.socket, socket.socket]] = []
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._listener.settimeout(0.2)
        self._thread = threading.Thread(target=self._accept, name="cuttable-link", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def cut(self) -> None:
        self._cut.set()

    def restore(self) -> None:
        with self._lock:
            conns, self._conns = self._conns, []
        for a, b in conns:
            for s in (a, b):
                try:
                    s.close()
                except OSError:
                    pass
        self._cut.clear()

    def close(self) -> None:
        self._stop.set()
        self.restore()
        self._listener.close()
        self._thread.join(5)

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except (TimeoutError, socket.timeout):
                continue
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._conns.append((client, upstream))
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()

    def _pump(self, a: socket.socket, b: socket.socket) -> None:
        peer = {a: b, b: a}
        try:
            while not self._stop.is_set():
                readable, _, _ = select.select([a, b], [], [], 0.2)
                for s in readable:
                    data = s.recv(65536)
                    if not data:
                        return
                    if not self._cut.is_set():
                        peer[s].sendall(data)
        except (OSError, ValueError):
            return
        finally:
            for s in (a, b):
                try:
                    s.close()
                except OSError:
                    pass
