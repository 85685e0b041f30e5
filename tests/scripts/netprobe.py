#!/usr/bin/env python3
"""netprobe.py -- what a link between two test-cluster hosts carries, for
test_vcluster.sh's check of `vcluster link HOST slow RATE LOSS`.

  netprobe.py tcp-serve ADDR PORT       accept one connection, read to its end, answer one byte
  netprobe.py tcp-send ADDR PORT BYTES  send BYTES, wait for the answer; prints Mbit/s
  netprobe.py udp-serve ADDR PORT       count datagrams until 2 s of silence; prints the count
  netprobe.py udp-send ADDR PORT N      send N one-byte datagrams, 0.5 ms apart

The server side is started first; every socket has a timeout, so a link
that carries nothing ends the probe with an error instead of a hang."""
import socket
import sys
import time


def main(argv):
    mode, addr, port = argv[1], argv[2], int(argv[3])
    if mode == "tcp-serve":
        with socket.create_server((addr, port)) as s:
            s.settimeout(30)
            c, _ = s.accept()
            c.settimeout(30)
            while c.recv(65536):
                pass
            c.sendall(b"x")
    elif mode == "tcp-send":
        n = int(argv[4])
        with socket.create_connection((addr, port), timeout=30) as s:
            t = time.monotonic()
            s.sendall(bytes(n))
            s.shutdown(socket.SHUT_WR)
            s.recv(1)
            print(f"{n * 8 / (time.monotonic() - t) / 1e6:.1f}")
    elif mode == "udp-serve":
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind((addr, port))
            s.settimeout(2)
            n = 0
            try:
                while True:
                    s.recv(16)
                    n += 1
            except socket.timeout:
                print(n)
    elif mode == "udp-send":
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for _ in range(int(argv[4])):
                s.sendto(b"p", (addr, port))
                time.sleep(0.0005)
    else:
        sys.exit(f"netprobe.py: unknown mode {mode}")


if __name__ == "__main__":
    main(sys.argv)
