// bench/trace-phases.ts: a turn's phases read from the kernel's trace of the service's syscalls.
import { expect, test } from "bun:test";
import { phases } from "../../bench/trace-phases";

/** One line of /sys/kernel/tracing/trace as Linux writes it, at `us` µs. */
const line = (us: number, call: string) => `        bin-base-16320   [001] ..... ${(86251 + us / 1e6).toFixed(6)}: ${call}`;
const woken = (us: number) => line(us, "sys_epoll_pwait2 -> 0x1");
const asleep = (us: number) => line(us, "sys_epoll_pwait2(epfd: 3, events: 0x56cd64800f0, maxevents: 0x400, timeout: 0x7fffd4406ac0, sigmask: 0x7fffd4406960, sigsetsize: 8)");
const recv = (us: number, fd: number) => line(us, `sys_recvfrom(fd: 0x${fd.toString(16)}, ubuf: 0x56cd6500020, size: 0x80000, flags: 0x40, addr: 0, addr_len: 0)`);
const send = (us: number, fd: number, len: number) => line(us, `sys_sendto(fd: 0x${fd.toString(16)}, buff: 0x56cdd772814, len: 0x${len.toString(16)}, flags: 0x4040, addr: 0, addr_len: 0)`);

/** A turn as the service's thread makes it: the client on fd 24, the model on fd 25, from `t`. */
function turn(t: number, before: number, model: number, after: number, rest: number): string[] {
  return [
    woken(t),
    recv(t + 2, 24),
    send(t + before, 25, 9033),
    asleep(t + before + 5),
    woken(t + before + model),
    recv(t + before + model + 1, 25),
    asleep(t + before + model + 40),
    line(t + before + model + 41, "sys_epoll_pwait2 -> 0x0"),
    send(t + before + model + after, 24, 1078),
    asleep(t + before + model + after + rest),
  ];
}

test("each phase is the median over the turns, the model's socket told by its large request", () => {
  const trace = ["# tracer: nop", ...turn(0, 100, 200, 300, 30), ...turn(1000, 110, 190, 280, 34), ...turn(2000, 120, 210, 290, 32)].join("\n");
  expect(phases(trace)).toEqual({ "before the model": 110, "the model": 200, "after the answer": 290, "after the response": 32 });
});

test("lines that are not the traced syscalls are passed over; no turn gives no figure", () => {
  const result = phases(["# tracer: nop", "#           TASK-PID     CPU#", line(5, "sys_write(fd: 0x1, buf: 0x1, count: 0x2)")].join("\n"));
  expect(Object.values(result).every(Number.isNaN)).toBe(true);
});
