import { approvableAt, calculateCommissionCents } from "../../shared/domain/commission-rules";

describe("calculateCommissionCents", () => {
  it("takes a percentage in basis points, rounding half up", () => {
    expect(calculateCommissionCents({ type: "percentage", basisPoints: 2000 }, 10_000)).toBe(2000);
    expect(calculateCommissionCents({ type: "percentage", basisPoints: 1250 }, 999)).toBe(125); // 124.875
    expect(calculateCommissionCents({ type: "percentage", basisPoints: 5000 }, 1)).toBe(1); // 0.5
  });

  it("pays a flat amount whatever the sale", () => {
    expect(calculateCommissionCents({ type: "flat", amountCents: 500 }, 10_000)).toBe(500);
    expect(calculateCommissionCents({ type: "flat", amountCents: 500 }, 1)).toBe(500);
  });
});

describe("approvableAt", () => {
  it("adds the hold days", () => {
    const created = new Date("2030-01-01T12:00:00.000Z");
    expect(approvableAt(created, 30)).toEqual(new Date("2030-01-31T12:00:00.000Z"));
    expect(approvableAt(created, 0)).toEqual(created);
  });
});
