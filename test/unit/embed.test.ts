/** Embedded referrals' pure parts (services/accounts/embed.ts): the derived referral code, the page's address, the lifetimes. */
import { embedReferralCode, embedSessionTtlMsFromEnv, embedTokenTtlMsFromEnv, embedUrl } from "../../services/accounts/embed";
import { ReferralCode } from "../../shared/values";

test("a user's derived referral code: the same for the same program and tenant id, another otherwise, a valid code", () => {
  const code = embedReferralCode(1, "user_8731");
  expect(code).toMatch(/^[a-z2-7]{12}$/);
  expect(ReferralCode.safeParse(code).success).toBe(true);
  expect(embedReferralCode(1, "user_8731")).toBe(code);
  expect(embedReferralCode(2, "user_8731")).not.toBe(code);
  expect(embedReferralCode(1, "user_8732")).not.toBe(code);
});

test("the page's address names the program in its path and carries the token in its fragment", () => {
  expect(embedUrl("https://track.example.com/", 7, "svc_et_abc")).toBe("https://track.example.com/embed/programs/7/referrals#token=svc_et_abc");
});

test("lifetimes: 10 minutes and 2 hours unless the environment says otherwise", () => {
  const saved = { ...process.env };
  delete process.env.EMBED_TOKEN_TTL_SECONDS;
  delete process.env.EMBED_SESSION_TTL_SECONDS;
  expect([embedTokenTtlMsFromEnv(), embedSessionTtlMsFromEnv()]).toEqual([600_000, 7_200_000]);
  process.env.EMBED_TOKEN_TTL_SECONDS = "30";
  expect(embedTokenTtlMsFromEnv()).toBe(30_000);
  process.env = saved;
});
