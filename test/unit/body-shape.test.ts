import { findBodyShapeProblem, MAX_JSON_DEPTH } from "../../shared/body-shape";

const nest = (levels: number): unknown => (levels === 0 ? 1 : { a: nest(levels - 1) });

describe("findBodyShapeProblem", () => {
  it("passes ordinary bodies, scalars and buffers", () => {
    expect(findBodyShapeProblem({ a: 1, b: [{ c: "x" }], d: null })).toBeNull();
    expect(findBodyShapeProblem("text")).toBeNull();
    expect(findBodyShapeProblem(Buffer.from('{"__proto__":1}'))).toBeNull();
  });

  it("finds own __proto__ keys as JSON.parse makes them, and constructor/prototype, naming the path", () => {
    expect(findBodyShapeProblem(JSON.parse('{"a":1,"__proto__":{"x":1}}'))).toEqual({ kind: "forbidden_key", field: "__proto__" });
    expect(findBodyShapeProblem(JSON.parse('{"a":{"b":[{"constructor":1}]}}'))).toEqual({ kind: "forbidden_key", field: "a.b.0.constructor" });
    expect(findBodyShapeProblem({ x: { prototype: {} } })).toEqual({ kind: "forbidden_key", field: "x.prototype" });
  });

  it("allows MAX_JSON_DEPTH levels of objects and arrays, not one more", () => {
    expect(MAX_JSON_DEPTH).toBe(20);
    expect(findBodyShapeProblem(nest(20))).toBeNull();
    expect(findBodyShapeProblem(nest(21))).toEqual({ kind: "too_deep", field: "a".repeat(20).split("").join(".") });
    const arrays = JSON.parse("[".repeat(21) + "]".repeat(21));
    expect(findBodyShapeProblem(arrays)?.kind).toBe("too_deep");
  });

  it("does not overflow the stack on a hostile depth", () => {
    expect(findBodyShapeProblem(JSON.parse("[".repeat(100_000) + "]".repeat(100_000)))?.kind).toBe("too_deep");
  });
});
