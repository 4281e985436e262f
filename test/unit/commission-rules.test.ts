import { approvableAt } from "../../shared/domain/commission-rules";

describe("approvableAt", () => {
  it("adds the hold days", () => {
    const created = new Date("2030-01-01T12:00:00.000Z");
    expect(approvableAt(created, 30)).toEqual(new Date("2030-01-31T12:00:00.000Z"));
    expect(approvableAt(created, 0)).toEqual(created);
  });
});
