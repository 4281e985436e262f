import { parseBoolean, parseId, parseInteger, percentToBasisPoints } from "../../cli/parse";

describe("percentToBasisPoints", () => {
  it.each([
    ["20", 2000],
    ["12.5", 1250],
    ["12.25", 1225],
    ["0.01", 1],
    ["0", 0],
    ["100", 10_000],
    ["100.00", 10_000],
    ["7.05", 705],
    [" 15 ", 1500],
  ])("turns %j percent into %d basis points", (percent, bps) => {
    expect(percentToBasisPoints(percent)).toBe(bps);
  });

  it.each(["100.01", "101", "999", "1000"])("refuses %j: more than 100 %%", (percent) => {
    expect(() => percentToBasisPoints(percent)).toThrow("at most 100");
  });

  it.each(["", "abc", "-5", "12.345", "1e2", "12.", ".5", "20%", "1,5"])("refuses %j: not a number with at most two decimals", (percent) => {
    expect(() => percentToBasisPoints(percent)).toThrow("at most two decimals");
  });
});

describe("parseId", () => {
  it.each([
    ["1", 1],
    ["12", 12],
    ["007", 7],
    ["9007199254740991", 9007199254740991],
  ])("reads %j as %d", (value, id) => {
    expect(parseId(value)).toBe(id);
  });

  it.each(["12abc", "1e3", "0x10", "1.0", "1.5", "-1", "+1", " 1", "1 ", "", "abc", "Infinity", "0b1", "1_000"])("refuses %j", (value) => {
    expect(() => parseId(value)).toThrow("positive whole number (digits only)");
  });

  it.each(["0", "9007199254740992", "99999999999999999999"])("refuses %j: out of range", (value) => {
    expect(() => parseId(value)).toThrow("positive whole number");
  });

  it("throws the error commander reports as a bad flag value", () => {
    expect(() => parseId("12abc")).toThrow(expect.objectContaining({ code: "commander.invalidArgument" }));
  });
});

describe("parseInteger", () => {
  it.each([
    ["0", 0],
    ["2500", 2500],
    ["-5", -5],
  ])("reads %j as %d", (value, n) => {
    expect(parseInteger(value)).toBe(n);
  });

  it.each(["12abc", "1e3", "0x10", "10.00", "1.5", "+5", "", " 5", "--5", "9007199254740992"])("refuses %j", (value) => {
    expect(() => parseInteger(value)).toThrow(/whole number|out of range/);
  });
});

describe("parseBoolean", () => {
  it("reads true and false only", () => {
    expect(parseBoolean("true")).toBe(true);
    expect(parseBoolean("false")).toBe(false);
    for (const value of ["yes", "1", "TRUE", ""]) expect(() => parseBoolean(value)).toThrow("true or false");
  });
});
