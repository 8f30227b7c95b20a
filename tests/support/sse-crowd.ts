// A crowd of open web UIs in a process of its own: `bun sse-crowd.ts URL TOKEN N SLOW` opens N
// event streams (/api/chat/events), of which SLOW never read a byte after connecting; prints
// "ready" once all are live, and on each line of stdin the bytes the readers received so far.
const [url, token, n, slow] = [process.argv[2]!, process.argv[3]!, Number(process.argv[4]), Number(process.argv[5] ?? 0)];
let received = 0;
const open = async (i: number) => {
  const res = await fetch(`${url}/api/chat/events`, { headers: { authorization: `Bearer ${token}` } });
  const reader = res.body!.getReader();
  await reader.read(); // ": connected"
  if (i < slow) return; // holds the connection, reads nothing more
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      received += value.length;
    }
  })();
};
await Promise.all(Array.from({ length: n }, (_, i) => open(i)));
console.log("ready");
for await (const _ of console) console.log(String(received));
