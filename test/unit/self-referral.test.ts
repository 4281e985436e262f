import { isSelfReferral } from "../../shared/domain/self-referral";

describe("isSelfReferral", () => {
  const partner = { email: "jane@example.com", customerKey: "user-7" };

  it("matches the partner's own email, whatever its case", () => {
    expect(isSelfReferral(true, partner, { email: "jane@example.com" })).toBe(true);
    expect(isSelfReferral(true, partner, { email: " Jane@Example.COM " })).toBe(true);
    expect(isSelfReferral(true, { email: "JANE@example.com" }, { email: "jane@example.com" })).toBe(true);
  });

  it("matches the partner's own customer key exactly", () => {
    expect(isSelfReferral(true, partner, { customerKey: "user-7" })).toBe(true);
    expect(isSelfReferral(true, partner, { email: "someone@example.com", customerKey: "user-7" })).toBe(true);
    expect(isSelfReferral(true, partner, { customerKey: "USER-7" })).toBe(false);
  });

  it("does not match other customers", () => {
    expect(isSelfReferral(true, partner, { email: "joe@example.com", customerKey: "user-8" })).toBe(false);
  });

  it("never matches on missing values", () => {
    expect(isSelfReferral(true, { email: null, customerKey: null }, { email: null, customerKey: null })).toBe(false);
    expect(isSelfReferral(true, { email: null, customerKey: null }, { email: "jane@example.com", customerKey: "user-7" })).toBe(false);
    expect(isSelfReferral(true, partner, {})).toBe(false);
    expect(isSelfReferral(true, { email: "", customerKey: "" }, { email: "", customerKey: "" })).toBe(false);
  });

  it("never matches with the guard off", () => {
    expect(isSelfReferral(false, partner, { email: "jane@example.com", customerKey: "user-7" })).toBe(false);
  });
});
