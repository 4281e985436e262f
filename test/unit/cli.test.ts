import { parseFlags, percentToBasisPoints } from "../../cli/index";

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

describe("parseFlags", () => {
  it("reads --name value, --name=value and bare flags", () => {
    expect(parseFlags(["--program", "1", "--amount-cents=-5", "--charges-enabled", "--url", "https://x.test/a?b=c", "--unread"])).toEqual({
      program: "1",
      "amount-cents": "-5",
      "charges-enabled": true,
      url: "https://x.test/a?b=c",
      unread: true,
    });
    expect(parseFlags(["--amount-cents", "-5"])).toEqual({ "amount-cents": "-5" });
  });

  it.each([["stray"], ["--program", "1", "2"], ["--"]])("refuses %j", (...args) => {
    expect(() => parseFlags(args)).toThrow("Unexpected argument");
  });
});
