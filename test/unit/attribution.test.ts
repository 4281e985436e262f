import { attributionSteps, normalizeEmail } from "../../shared/domain/attribution";

describe("attributionSteps", () => {
  it("tries click, email, processor customer, then customer key, in that order", () => {
    expect(attributionSteps({ customerKey: "cust_1", processorCustomerId: "cus_1", email: "a@example.com", clickId: "clk_1" })).toEqual([
      { method: "click", value: "clk_1" },
      { method: "email", value: "a@example.com" },
      { method: "processor_customer", value: "cus_1" },
      { method: "customer_key", value: "cust_1" },
    ]);
  });

  it("leaves out the hints that are missing, null or empty", () => {
    expect(attributionSteps({ email: "a@example.com", customerKey: "cust_1" })).toEqual([
      { method: "email", value: "a@example.com" },
      { method: "customer_key", value: "cust_1" },
    ]);
    expect(attributionSteps({ clickId: null, email: "", processorCustomerId: "cus_1", customerKey: undefined })).toEqual([{ method: "processor_customer", value: "cus_1" }]);
    expect(attributionSteps({})).toEqual([]);
  });

  it("looks emails up normalised", () => {
    expect(attributionSteps({ email: "  Jane.Doe@Example.COM " })).toEqual([{ method: "email", value: "jane.doe@example.com" }]);
  });
});

describe("normalizeEmail", () => {
  it("trims and lower-cases", () => {
    expect(normalizeEmail(" A@B.Example ")).toBe("a@b.example");
    expect(normalizeEmail("plain@example.com")).toBe("plain@example.com");
  });
});
