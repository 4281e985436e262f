/** The portal service's actions: input schemas and HTTP endpoints (shared/endpoint.ts). All under the partner session. */
import { declareActions } from "../../shared/endpoint";
import * as S from "./schemas";

const notice = {
  id: 12,
  kind: "partner_notice",
  programId: 1,
  partnerId: 3,
  commissionId: 7,
  transactionId: "order-1001",
  status: "refunded",
  deductionCents: 600,
  deductionAmount: 6,
  currency: "usd",
  reason: "customer request",
  createdAt: "2026-01-01T00:00:00.000Z",
  partnerReadAt: null,
};

const profileExample = {
  partnerId: 3,
  name: "Jane Doe",
  email: "jane@example.com",
  country: "DE",
  payoutMethod: "bank",
  paypalEmail: null,
  bank: { accountHolder: "Jane Doe", iban: "DE89370400440532013000", accountNumber: null, routingNumber: null, swift: "COBADEFFXXX" },
  locale: "de",
  updatedAt: "2026-01-02T00:00:00.000Z",
};

const postbackExample = {
  id: 4,
  programId: 1,
  partnerId: 3,
  url: "https://partner.example/postback",
  description: null,
  eventTypes: ["lead.created", "sale.created", "commission.created", "commission.reversed"],
  enabled: true,
  consecutiveFailures: 0,
  disabledAt: null,
  disabledReason: null,
  previousSecretExpiresAt: null,
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-01T00:00:00.000Z",
};
const postbackDeliveryExample = {
  id: 9,
  endpointId: 4,
  producer: "sales",
  eventId: 2,
  eventType: "sale.created",
  body: '{"id":"sales:2","type":"sale.created","createdAt":"2026-01-01T00:00:00.000Z","data":{"saleId":9,"programId":1,"partnerId":3,"transactionId":"order-1001","amountCents":10000,"currency":"usd","customer":"us•••42","isRecurring":false,"commissionDue":true,"occurredAt":"2026-01-01T00:00:00.000Z","createdAt":"2026-01-01T00:00:01.000Z"}}',
  status: "failed",
  attempts: 1,
  nextAttemptAt: "2026-01-01T00:00:00.000Z",
  lastStatusCode: 500,
  lastError: "HTTP 500",
  deliveredAt: null,
  retriedAt: null,
  createdAt: "2026-01-01T00:00:00.000Z",
  attemptLog: [{ attempt: 1, at: "2026-01-01T00:00:00.000Z", statusCode: 500, error: "HTTP 500", responseExcerpt: "Internal Server Error", durationMs: 41 }],
};
const POSTBACK_TARGET_RULE =
  "The URL's host must be a public internet address: a host that is, or resolves to, a loopback, private, link-local or other non-public address is refused with 422 webhook_target_not_allowed.";
const NOT_YOURS = "404 for a postback that is not yours, or a program you are not approved in.";

export const PORTAL = declareActions("portal", {
  me: {
    input: S.NoInput,
    http: {
      method: "GET",
      path: "/api/partner/me",
      route: "partner",
      tag: "Partner portal",
      summary: "The signed-in partner and their programs",
      description:
        "The partner (name, email) and each program they are enrolled in with the enrollment's status; for approved enrollments also the referral code, the referral link (the program's landing page, else the merchant's site, with ?ref=code; null when the program names neither), the number of clicks (test clicks left out) and the balance in minor units, with pendingCents: commissions earned but still in the merchant's hold period, net of refunds, which the balance does not hold yet, and heldForReviewCents: the part of it held for the merchant's review. For building links to other pages: the merchant's sites (allowedOrigins, empty when the program names none), its landing page (defaultLandingUrl, or null) and referralParam, the query parameter that carries your referral code (ref); a link to any page of those sites with ref=code added counts for you. Not approved: allowedOrigins is empty and defaultLandingUrl null.",
      response: {
        description: "The partner and their programs.",
        example: {
          partner: { id: 3, name: "Jane", email: "jane@example.com" },
          programs: [
            {
              programId: 1,
              name: "Acme",
              currency: "usd",
              status: "approved",
              referralCode: "jane",
              referralLink: "https://shop.example/pricing?ref=jane",
              allowedOrigins: ["https://shop.example"],
              defaultLandingUrl: "https://shop.example/pricing",
              referralParam: "ref",
              clicks: 120,
              balance: { balanceCents: 1400, pendingCents: 500, heldForReviewCents: 0, creditedCents: 2000, deductedCents: 600, paidCents: 0 },
            },
          ],
        },
      },
    },
  },
  notices: {
    input: S.NoticesInput,
    http: {
      method: "GET",
      path: "/api/partner/programs/:programId/notices",
      route: "partner",
      tag: "Partner portal",
      summary: "Your notices in a program",
      description:
        "Notices about your commissions (a refund or chargeback reduced one, with the reason), newest first, each with partnerReadAt (your read state). Paginated: limit and the nextCursor of the previous page. 404 for a program you are not approved in.",
      example: { programId: 1, limit: 25 },
      errors: ["not_found"],
      response: { description: "A page of notices.", example: { data: [notice], nextCursor: null } },
    },
  },
  commissions: {
    input: S.ListInput,
    http: {
      method: "GET",
      path: "/api/partner/programs/:programId/commissions",
      route: "partner",
      tag: "Partner portal",
      summary: "Your commissions in a program",
      description:
        "Your commissions, newest first, each with the sale amount (in the program's currency; saleOriginal is what the customer paid when it was another currency, and its refunds are in that one), the commission, what refunds took back (deductedCents), what it is worth now (netCents), its status, the reward that earned it in words (reward, for example 20% of each sale or $10.00 per new customer, as it was when the commission was created; null for commissions from before rewards), and each refund with its amount, deduction and reason. Paginated: limit and the nextCursor of the previous page. 404 for a program you are not approved in.",
      example: { programId: 1, limit: 25 },
      errors: ["not_found"],
      response: {
        description: "A page of commissions.",
        example: {
          data: [
            {
              id: 7,
              programId: 1,
              partnerId: 3,
              transactionId: "order-1001",
              currency: "usd",
              saleAmountCents: 10000,
              saleOriginal: null,
              amountCents: 2000,
              deductedCents: 600,
              netCents: 1400,
              reward: "20% of each sale",
              status: "refunded",
              refunds: [{ id: 1, amountCents: 3000, deductionCents: 600, reasonCode: "refund", reason: "customer request" }],
            },
          ],
          nextCursor: null,
        },
      },
    },
  },
  stats: {
    input: S.StatsInput,
    http: {
      method: "GET",
      path: "/api/partner/programs/:programId/stats",
      route: "partner",
      tag: "Partner portal",
      summary: "Your figures in a program, day by day",
      description:
        "Your clicks (test clicks left out), referred signups (leads), referred sales, their revenue and your commissions (commissionCents: those created that day, pending, credited or paid; what refunds reversed is left out) for each UTC day of the range (days without anything are zeros), and their totals. Money in minor units of the program's currency. The range is from and to, inclusive, at most 366 days; default the last 30 days. Live data only. 404 for a program you are not approved in.",
      example: { programId: 1, from: "2026-01-01", to: "2026-01-30" },
      errors: ["not_found"],
      response: {
        description: "Your figures per day and in total.",
        example: {
          programId: 1,
          currency: "usd",
          from: "2026-01-01",
          to: "2026-01-30",
          days: [{ date: "2026-01-01", clicks: 12, leads: 4, sales: 2, revenueCents: 20000, commissionCents: 4000 }],
          totals: { clicks: 12, leads: 4, sales: 2, revenueCents: 20000, commissionCents: 4000 },
        },
      },
    },
  },
  breakdowns: {
    input: S.BreakdownsInput,
    http: {
      method: "GET",
      path: "/api/partner/programs/:programId/breakdowns",
      route: "partner",
      tag: "Partner portal",
      summary: "Your clicks, signups and sales by country, device, browser and referrer",
      description:
        "Your clicks (test and bots' clicks left out), referred signups (leads) and referred sales with their revenue over the range, by the country, device type, browser and referrer domain of the click that brought them. Per family and dimension: the 10 values with the most (sales: the most revenue), and other: the rest summed (null when there is none). A value the click did not tell is unknown (direct for a referrer domain: no referrer); a signup or sale attributed without a click (coupon code, email) counts as unknown and direct too. Money in minor units of the program's currency. The range is from and to, inclusive, at most 366 days; default the last 30 days. Live data only. 404 for a program you are not approved in.",
      example: { programId: 1, from: "2026-01-01", to: "2026-01-30" },
      errors: ["not_found", "invalid_request"],
      response: {
        description: "Your breakdowns of the range.",
        example: {
          programId: 1,
          currency: "usd",
          currencyExponent: 2,
          from: "2026-01-01",
          to: "2026-01-30",
          clicks: {
            country: { values: [{ value: "DE", clicks: 12 }], other: null },
            device: { values: [{ value: "mobile", clicks: 12 }], other: null },
            browser: { values: [{ value: "Chrome", clicks: 12 }], other: null },
            referrer: { values: [{ value: "blog.example", clicks: 12 }], other: null },
          },
          leads: {
            country: { values: [{ value: "DE", leads: 4 }], other: null },
            device: { values: [{ value: "mobile", leads: 4 }], other: null },
            browser: { values: [{ value: "Chrome", leads: 4 }], other: null },
            referrer: { values: [{ value: "blog.example", leads: 4 }], other: null },
          },
          sales: {
            country: { values: [{ value: "DE", sales: 2, amountCents: 20000 }], other: null },
            device: { values: [{ value: "mobile", sales: 2, amountCents: 20000 }], other: null },
            browser: { values: [{ value: "Chrome", sales: 2, amountCents: 20000 }], other: null },
            referrer: { values: [{ value: "blog.example", sales: 2, amountCents: 20000 }], other: null },
          },
        },
      },
    },
  },
  profile: {
    input: S.NoInput,
    http: {
      method: "GET",
      path: "/api/partner/profile",
      route: "partner",
      tag: "Partner portal",
      summary: "Your profile and payout details",
      description:
        "Your name, your email (how you sign in; it cannot be changed here), your country, how you want to be paid (payoutMethod: paypal, bank or stripe, or null) with the PayPal email or bank account it needs, the language of the portal and your emails (locale: en, de, fr or es; null follows your browser, and English for emails), and when you last changed them. They are yours across every program you are in; merchants see your name, email, country and payout method, not your account details.",
      response: { description: "Your profile.", example: profileExample },
    },
  },
  updateProfile: {
    input: S.UpdateProfileInput,
    http: {
      method: "PATCH",
      path: "/api/partner/profile",
      route: "partner",
      tag: "Partner portal",
      summary: "Change your profile and payout details",
      description:
        "Sets the fields given and keeps the others; bank replaces your bank account as a whole (null removes it). The result must be usable for its payout method: paypal needs paypalEmail, bank needs bank with an iban (its check digits are verified) or an accountNumber; otherwise 400 naming the field, and nothing changes. stripe needs a Stripe account connected in each program that pays you (POST /api/partner/programs/:programId/stripe-onboarding).",
      example: { country: "DE", payoutMethod: "bank", bank: { accountHolder: "Jane Doe", iban: "DE89 3704 0044 0532 0130 00", swift: "COBADEFFXXX" } },
      response: { description: "Your profile after the change.", example: profileExample },
    },
  },
  withdrawals: {
    input: S.ListInput,
    http: {
      method: "GET",
      path: "/api/partner/programs/:programId/withdrawals",
      route: "partner",
      tag: "Partner portal",
      summary: "Your withdrawals in a program",
      description: "Your withdrawals (payouts), newest first: amount, status (open, paid, cancelled) and dates. Paginated. 404 for a program you are not approved in.",
      example: { programId: 1, limit: 25 },
      errors: ["not_found"],
      response: {
        description: "A page of withdrawals.",
        example: {
          data: [{ id: 2, programId: 1, partnerId: 3, currency: "usd", requestedCents: 1400, amountCents: 1400, status: "paid", paidAt: "2026-02-01T00:00:00.000Z" }],
          nextCursor: null,
        },
      },
    },
  },
  payout: {
    input: S.PayoutInput,
    http: {
      method: "GET",
      path: "/api/partner/programs/:programId/withdrawals/:withdrawalId",
      route: "partner",
      tag: "Partner portal",
      summary: "One of your payouts, with its commissions",
      description:
        "The payout (amount, method, state, transfer, failure reason and dates) and the commissions it paid or holds. 404 for a payout that is not yours, or a program you are not approved in.",
      example: { programId: 1, withdrawalId: 9 },
      errors: ["not_found"],
      response: {
        description: "The payout.",
        example: {
          id: 9,
          programId: 1,
          currency: "usd",
          amountCents: 6000,
          status: "paid",
          method: "bank",
          paidAt: "2026-12-01T09:00:00.000Z",
          commissions: [{ id: 7, kind: "sale", transactionId: "order-1001", netCents: 2000, status: "paid", createdAt: "2026-11-02T10:00:00.000Z" }],
        },
      },
    },
  },
  statement: {
    input: S.StatementInput,
    http: {
      method: "GET",
      path: "/api/partner/programs/:programId/statement.csv",
      route: "partner",
      tag: "Partner portal",
      summary: "Your payout statement (CSV)",
      description:
        "Every payout of yours in the program, newest first, one row per commission it paid or holds (a failed or cancelled payout: one row without commission), with the payout's state, method, dates and amount. UTF-8 CSV with a header row; money in minor units. 404 for a program you are not approved in.",
      example: { programId: 1 },
      errors: ["not_found"],
      response: {
        description: "The CSV file (Content-Disposition: attachment).",
        contentType: "text/csv",
        example:
          "payout_id,payout_status,method,payout_created_at,paid_at,currency,payout_amount_cents,commission_id,commission_kind,transaction_id,commission_created_at,commission_net_cents,failure_reason\r\n9,paid,bank,2026-12-01T00:00:00.000Z,2026-12-01T09:00:00.000Z,usd,6000,7,sale,order-1001,2026-11-02T10:00:00.000Z,2000,\r\n",
      },
    },
  },
  customers: {
    input: S.ListInput,
    http: {
      method: "GET",
      path: "/api/partner/programs/:programId/customers",
      route: "partner",
      tag: "Partner portal",
      summary: "Customers you referred in a program",
      description:
        "Customers who signed up through you (test signups left out), newest first, masked: the customer key shortened and the email reduced to its first letters and top-level domain, since they are the merchant's customers. Paginated. 404 for a program you are not approved in.",
      example: { programId: 1, limit: 25 },
      errors: ["not_found"],
      response: {
        description: "A page of masked customers.",
        example: { data: [{ id: 9, customer: "us•••42", email: "j•••@e•••.com", createdAt: "2026-01-01T00:00:00.000Z" }], nextCursor: null },
      },
    },
  },
  rewards: {
    input: S.ProgramInput,
    http: {
      method: "GET",
      path: "/api/partner/programs/:programId/rewards",
      route: "partner",
      tag: "Partner portal",
      summary: "What you earn in a program",
      description:
        "Your rewards in the program in plain words (those of your partner group, e.g. 20% of each sale, for 12 months), and holdDays: how many days a commission waits before it is credited (refunds in that time reduce it). 404 for a program you are not approved in.",
      example: { programId: 1 },
      errors: ["not_found"],
      response: {
        description:
          "Your rewards, and how you are paid: cash by your payout method (rewardAs cash; payoutMethod null until you choose one), or credit in the merchant's app (account_credit, stripe_balance).",
        example: {
          programId: 1,
          currency: "usd",
          holdDays: 30,
          rewards: ["20% of each sale, for 12 months", "$5.00 per new customer"],
          rewardAs: "cash",
          payoutMethod: "paypal",
          minPayoutCents: 5000,
        },
      },
    },
  },
  stripeOnboarding: {
    input: S.ProgramInput,
    http: {
      method: "POST",
      path: "/api/partner/programs/:programId/stripe-onboarding",
      route: "partner",
      tag: "Partner portal",
      summary: "Connect your Stripe account (Stripe's onboarding)",
      description:
        "For payouts through Stripe: creates your Stripe Express account under the merchant's Stripe platform (once per program; your profile's email and country are passed on) and answers a link to Stripe's onboarding, where Stripe asks for your details and bank account. Open it at once: it expires within minutes. Stripe sends you back to the portal (/portal?program=<id>&stripe=return), or with stripe=refresh when the link expired (ask for a new one). 409 processor_key_missing when the merchant has not set up Stripe payouts; 503 when Stripe cannot be reached. 404 for a program you are not approved in.",
      example: { programId: 1 },
      errors: ["not_found", "processor_key_missing", "processor_key_refused", "service_unavailable"],
      response: { description: "The onboarding link.", example: { url: "https://connect.stripe.com/setup/e/acct_1Nv0FGQ9RKHgCVdK/aB3dE5fG7hJ9" } },
    },
  },
  payoutAccount: {
    input: S.ProgramInput,
    http: {
      method: "GET",
      path: "/api/partner/programs/:programId/payout-account",
      route: "partner",
      tag: "Partner portal",
      summary: "How you are paid in a program",
      description:
        "Your payout method (from your profile: paypal, bank, stripe, or null) and your Stripe account in the program: its id, whether it can receive payouts (ready: Stripe allows transfers to it) and whether your details are in (detailsSubmitted); null when you have not connected one. An account not ready yet is read again from Stripe; when Stripe cannot be reached, the last known state is shown. 404 for a program you are not approved in.",
      example: { programId: 1 },
      errors: ["not_found"],
      response: {
        description: "Your payout method and Stripe account.",
        example: { payoutMethod: "stripe", stripe: { accountId: "acct_1Nv0FGQ9RKHgCVdK", ready: true, detailsSubmitted: true } },
      },
    },
  },
  postbacks: {
    input: S.ProgramInput,
    http: {
      method: "GET",
      path: "/api/partner/programs/:programId/postbacks",
      route: "partner",
      tag: "Partner portal",
      summary: "Your postbacks in a program",
      description:
        "Your postback URLs in the program, enabled or not, without their signing secrets: each gets your own events there (lead.created, sale.created, commission.created, commission.reversed, those you chose), signed, retried and logged like a merchant's webhooks. A postback is disabled by itself after 5 deliveries in a row were given up. 404 for a program you are not approved in.",
      example: { programId: 1 },
      errors: ["not_found"],
      response: { description: "Your postbacks.", example: [postbackExample] },
    },
  },
  createPostback: {
    input: S.CreatePostbackInput,
    http: {
      method: "POST",
      path: "/api/partner/programs/:programId/postbacks",
      route: "partner",
      tag: "Partner portal",
      summary: "Add a postback URL",
      description: `Your events in the program, of the types chosen, are posted to the URL as JSON and signed with the postback's secret (the Svc-Signature header, as merchants' webhooks are): ids, amounts, currency, status and times, the customer masked as this portal shows it. The secret is in this answer only. At most 5 enabled postbacks per program and 20 in all (409 postback_limit_reached). ${POSTBACK_TARGET_RULE} 404 for a program you are not approved in.`,
      example: { programId: 1, url: "https://partner.example/postback", eventTypes: ["sale.created", "commission.created"] },
      errors: ["not_found", "conflict", "postback_limit_reached", "webhook_target_not_allowed"],
      response: { description: "The postback with its secret.", example: { ...postbackExample, secret: "whsec_..." } },
    },
  },
  disablePostback: {
    input: S.PostbackInput,
    http: {
      method: "POST",
      path: "/api/partner/programs/:programId/postbacks/:postbackId/disable",
      route: "partner",
      tag: "Partner portal",
      summary: "Disable a postback",
      description: `Nothing more is sent to it until you enable it again; its pending deliveries wait. Disabling one that is disabled changes nothing. ${NOT_YOURS}`,
      example: { programId: 1, postbackId: 4 },
      errors: ["not_found"],
      response: { description: "The postback.", example: { ...postbackExample, enabled: false, disabledAt: "2026-01-02T00:00:00.000Z", disabledReason: "disabled from the partner portal" } },
    },
  },
  enablePostback: {
    input: S.PostbackInput,
    http: {
      method: "POST",
      path: "/api/partner/programs/:programId/postbacks/:postbackId/enable",
      route: "partner",
      tag: "Partner portal",
      summary: "Enable a postback",
      description: `Deliveries resume, with a fresh count of failures. The URL is checked again as when it was added (422 webhook_target_not_allowed), and at most 5 may be enabled (409 postback_limit_reached). ${NOT_YOURS}`,
      example: { programId: 1, postbackId: 4 },
      errors: ["not_found", "postback_limit_reached", "webhook_target_not_allowed"],
      response: { description: "The postback.", example: postbackExample },
    },
  },
  rotatePostbackSecret: {
    input: S.PostbackInput,
    http: {
      method: "POST",
      path: "/api/partner/programs/:programId/postbacks/:postbackId/rotate-secret",
      route: "partner",
      tag: "Partner portal",
      summary: "Rotate a postback's signing secret",
      description: `Makes a new signing secret, shown in this answer only. For the next 24 hours (until previousSecretExpiresAt) each delivery also carries a second v1 signature made with the previous secret, so your receiver keeps verifying while you switch. ${NOT_YOURS}`,
      example: { programId: 1, postbackId: 4 },
      errors: ["not_found"],
      response: { description: "The postback with its new secret.", example: { ...postbackExample, previousSecretExpiresAt: "2026-01-02T00:00:00.000Z", secret: "whsec_..." } },
    },
  },
  testPostback: {
    input: S.PostbackInput,
    http: {
      method: "POST",
      path: "/api/partner/programs/:programId/postbacks/:postbackId/test",
      route: "partner",
      tag: "Partner portal",
      summary: "Send a test event to a postback",
      description: `Queues one test.ping event for this postback, whatever event types it takes: posted, signed and retried like any event, and listed in its delivery log. The postback must be enabled (409 conflict otherwise), and its URL is checked again (422 webhook_target_not_allowed). ${NOT_YOURS}`,
      example: { programId: 1, postbackId: 4 },
      errors: ["not_found", "conflict", "webhook_target_not_allowed"],
      response: {
        description: "The queued delivery.",
        example: {
          ...postbackDeliveryExample,
          id: 10,
          producer: "test",
          eventId: 1,
          eventType: "test.ping",
          body: '{"id":"test:1","type":"test.ping","createdAt":"2026-01-01T00:00:00.000Z","data":{"endpointId":4,"message":"A test event: your endpoint received it. It carries no data to apply."}}',
          status: "pending",
          attempts: 0,
          lastStatusCode: null,
          lastError: null,
          attemptLog: [],
        },
      },
    },
  },
  postbackDeliveries: {
    input: S.PostbackDeliveriesInput,
    http: {
      method: "GET",
      path: "/api/partner/programs/:programId/postbacks/:postbackId/deliveries",
      route: "partner",
      tag: "Partner portal",
      summary: "A postback's delivery log",
      description: `The postback's deliveries, newest first, each with the body sent, its status (pending, succeeded or failed), its attempts and every attempt's status code or error, with the start of a text answer (responseExcerpt). A failed attempt is retried with a growing delay; a delivery is given up (failed) after its attempts. Paginated: limit and the nextCursor of the previous page. ${NOT_YOURS}`,
      example: { programId: 1, postbackId: 4, status: "failed", limit: 25 },
      errors: ["not_found"],
      response: { description: "A page of deliveries, newest first.", example: { data: [postbackDeliveryExample], nextCursor: null } },
    },
  },
  retryPostbackDelivery: {
    input: S.RetryPostbackInput,
    http: {
      method: "POST",
      path: "/api/partner/programs/:programId/postbacks/:postbackId/deliveries/:deliveryId/retry",
      route: "partner",
      tag: "Partner portal",
      summary: "Retry a failed delivery",
      description: `Sends a failed delivery again, with the same body: it becomes pending at once with a fresh allowance of attempts. Retrying one that is pending or succeeded changes nothing (retried false). The postback must be enabled (409 conflict otherwise), and its URL is checked again (422 webhook_target_not_allowed). ${NOT_YOURS}`,
      example: { programId: 1, postbackId: 4, deliveryId: 9 },
      errors: ["not_found", "conflict", "webhook_target_not_allowed"],
      response: {
        description: "Whether it was retried, and the delivery.",
        example: { retried: true, delivery: { ...postbackDeliveryExample, status: "pending", retriedAt: "2026-01-01T01:00:00.000Z" } },
      },
    },
  },
  markNoticeRead: {
    input: S.NoticeReadInput,
    http: {
      method: "POST",
      path: "/api/partner/programs/:programId/notices/:notificationId/read",
      route: "partner",
      tag: "Partner portal",
      summary: "Mark a notice read",
      description: "Sets partnerReadAt (once: marking again keeps the first time). 404 when the notice is not yours or not in this program.",
      example: { programId: 1, notificationId: 12 },
      errors: ["not_found"],
      response: { description: "The notice.", example: { ...notice, partnerReadAt: "2026-01-02T00:00:00.000Z" } },
    },
  },
});
