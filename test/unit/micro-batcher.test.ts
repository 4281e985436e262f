import { MicroBatcher, MicroBatcherStoppedError } from "../../shared/micro-batcher";

/** A flush that records each batch it was given and answers each item doubled. */
function recorder(opts: { fail?: (items: number[]) => boolean; delayMs?: number } = {}) {
  const batches: number[][] = [];
  const flush = async (items: number[]) => {
    batches.push([...items]);
    if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs));
    if (opts.fail?.(items)) throw new Error("database down");
    return items.map((i) => i * 2);
  };
  return { batches, flush };
}

describe("MicroBatcher", () => {
  test("groups items added within the wait into one flush and answers each with its own result", async () => {
    const r = recorder();
    const b = new MicroBatcher(r.flush, { maxSize: 100, maxWaitMs: 20 });
    const results = await Promise.all([1, 2, 3].map((i) => b.add(i)));
    expect(results).toEqual([2, 4, 6]);
    expect(r.batches).toEqual([[1, 2, 3]]);
  });

  test("a full batch is flushed at once, without waiting", async () => {
    const r = recorder();
    const b = new MicroBatcher(r.flush, { maxSize: 2, maxWaitMs: 60_000 });
    const results = await Promise.all([1, 2, 3, 4].map((i) => b.add(i)));
    expect(results).toEqual([2, 4, 6, 8]);
    expect(r.batches).toEqual([
      [1, 2],
      [3, 4],
    ]);
  });

  test("an answer waits for its batch's flush to finish", async () => {
    let finish!: () => void;
    const gate = new Promise<void>((r) => (finish = r));
    const b = new MicroBatcher(
      async (items: number[]) => {
        await gate;
        return items;
      },
      { maxSize: 10, maxWaitMs: 0 },
    );
    let answered = false;
    const p = b.add(1).then(() => (answered = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(answered).toBe(false);
    finish();
    await p;
    expect(answered).toBe(true);
  });

  test("a failed flush fails every caller of that batch, and only of that batch", async () => {
    const r = recorder({ fail: (items) => items.includes(2) });
    const b = new MicroBatcher(r.flush, { maxSize: 2, maxWaitMs: 60_000 });
    const settled = await Promise.allSettled([1, 2, 3, 4].map((i) => b.add(i)));
    expect(settled.map((s) => s.status)).toEqual(["rejected", "rejected", "fulfilled", "fulfilled"]);
    expect((settled[0] as PromiseRejectedResult).reason.message).toBe("database down");
  });

  test("a flush answering the wrong number of results fails the batch instead of guessing", async () => {
    const b = new MicroBatcher(async (items: number[]) => items.slice(1), { maxSize: 10, maxWaitMs: 0 });
    await expect(Promise.all([b.add(1), b.add(2)])).rejects.toThrow("flush returned 1 results for 2 items");
  });

  test("stop flushes what waits and waits for batches in flight; later items are refused", async () => {
    const r = recorder({ delayMs: 30 });
    const b = new MicroBatcher(r.flush, { maxSize: 2, maxWaitMs: 60_000 });
    const first = Promise.all([b.add(1), b.add(2)]); // full: in flight
    const waiting = b.add(3); // would wait a minute
    expect(b.waiting).toBe(1);
    await b.stop();
    expect(await first).toEqual([2, 4]);
    expect(await waiting).toBe(6);
    expect(r.batches).toEqual([[1, 2], [3]]);
    await expect(b.add(4)).rejects.toBeInstanceOf(MicroBatcherStoppedError);
  });

  test("addAll flushes items that arrived together at once, with whatever was waiting", async () => {
    const r = recorder();
    const b = new MicroBatcher(r.flush, { maxSize: 100, maxWaitMs: 60_000 });
    const waiting = b.add(1);
    const together = b.addAll([2, 3]);
    expect(await Promise.all([waiting, ...together])).toEqual([2, 4, 6]);
    expect(r.batches).toEqual([[1, 2, 3]]);
    expect(b.waiting).toBe(0);
  });

  test("with maxWaitMs 0 the items of one event-loop turn go together, later ones in the next batch", async () => {
    const r = recorder();
    const b = new MicroBatcher(r.flush, { maxSize: 100, maxWaitMs: 0 });
    const first = [b.add(1), b.add(2)];
    await new Promise((resolve) => setImmediate(resolve));
    const second = b.add(3);
    expect(await Promise.all([...first, second])).toEqual([2, 4, 6]);
    expect(r.batches).toEqual([[1, 2], [3]]);
  });

  test("with maxInFlight, an idle batcher sends at once and a busy one sends what gathered when a batch comes back", async () => {
    const gates: Array<() => void> = [];
    const batches: number[][] = [];
    const b = new MicroBatcher(
      async (items: number[]) => {
        batches.push([...items]);
        await new Promise<void>((resolve) => gates.push(resolve));
        return items.map((i) => i * 2);
      },
      { maxSize: 100, maxWaitMs: 60_000, maxInFlight: 1 },
    );
    const first = b.add(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1]]); // no timer: the 60 s window is not used
    const later = [b.add(2), b.add(3)];
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(batches).toEqual([[1]]); // one in flight: 2 and 3 wait for it
    gates.shift()!();
    expect(await first).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(batches).toEqual([[1], [2, 3]]);
    gates.shift()!();
    expect(await Promise.all(later)).toEqual([4, 6]);
  });

  test("with maxInFlight, a full batch still goes at once", async () => {
    const r = recorder({ delayMs: 30 });
    const b = new MicroBatcher(r.flush, { maxSize: 2, maxWaitMs: 0, maxInFlight: 1 });
    const results = await Promise.all([1, 2, 3, 4].map((i) => b.add(i)));
    expect(results).toEqual([2, 4, 6, 8]);
    expect(r.batches).toEqual([
      [1, 2],
      [3, 4],
    ]);
  });

  test("an item offered after stop is refused as a temporary error (503)", async () => {
    const b = new MicroBatcher(recorder().flush, { maxSize: 2, maxWaitMs: 1 });
    await b.stop();
    await expect(b.add(1)).rejects.toMatchObject({ errorCode: "service_unavailable", code: 503 });
  });

  test("rejects nonsensical options", () => {
    expect(() => new MicroBatcher(async (i: number[]) => i, { maxSize: 0, maxWaitMs: 1 })).toThrow();
  });
});
