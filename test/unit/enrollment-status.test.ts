/** The allowed changes of a partner's enrollment (services/programs/enrollment-status.ts). */
import { enrollmentTransition } from "../../services/programs/enrollment-status";

test("approve: pending and declined become approved; approved stays", () => {
  expect(enrollmentTransition("pending", "approve")).toEqual({ kind: "change", from: "pending", to: "approved" });
  expect(enrollmentTransition("declined", "approve")).toEqual({ kind: "change", from: "declined", to: "approved" });
  expect(enrollmentTransition("approved", "approve")).toEqual({ kind: "unchanged", status: "approved" });
});

test("decline: pending and approved become declined; declined stays", () => {
  expect(enrollmentTransition("pending", "decline")).toEqual({ kind: "change", from: "pending", to: "declined" });
  expect(enrollmentTransition("approved", "decline")).toEqual({ kind: "change", from: "approved", to: "declined" });
  expect(enrollmentTransition("declined", "decline")).toEqual({ kind: "unchanged", status: "declined" });
});

test("no decision leads back to pending, and an unknown status is refused", () => {
  for (const from of ["pending", "approved", "declined"] as const) {
    for (const decision of ["approve", "decline"] as const) {
      const t = enrollmentTransition(from, decision);
      expect(t.kind === "change" ? t.to : "x").not.toBe("pending");
    }
  }
  expect(enrollmentTransition("suspended" as never, "approve")).toEqual({ kind: "refused", message: "A suspended enrollment cannot be approved." });
});
