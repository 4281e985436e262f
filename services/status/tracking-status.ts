/**
 * The integration checklist of a program (spec 2.4, 3.2): pure rules, so the
 * status service only gathers facts and this decides what they mean.
 */

export type StepStatus = "complete" | "pending";

export interface TestEventFacts {
  count: number;
  latest: { id: number; timestamp: string; createdAt: string } | null;
}

export interface PaymentFacts {
  paymentTrackingMode: "processor_connect" | "s2s";
  connectionStatus: string;
  accountId: string | null;
  chargesEnabled: boolean;
  payoutsEnabled: boolean;
  detailsSubmitted: boolean;
  connectedAt: string | null;
}

export interface TrackingStatusFacts {
  programId: string;
  clicks: TestEventFacts;
  leads: TestEventFacts;
  payments: PaymentFacts;
  hasPartners: boolean;
  now: Date;
}

/** The spec counts at most this many test events per step. */
export const TEST_EVENT_CAP = 10;

export const isProcessorConnected = (p: PaymentFacts) => p.connectionStatus === "connected";

export const paymentsReady = (p: PaymentFacts) => isProcessorConnected(p) || p.paymentTrackingMode === "s2s";

const step = (done: boolean): StepStatus => (done ? "complete" : "pending");

function eventStatistics(facts: TestEventFacts) {
  return {
    testEventCount: Math.min(facts.count, TEST_EVENT_CAP),
    hasTestEvents: facts.count > 0,
    latestTestEvent: facts.latest,
  };
}

export function buildTrackingStatus(f: TrackingStatusFacts) {
  const connected = isProcessorConnected(f.payments);
  const ready = paymentsReady(f.payments);
  return {
    data: {
      programId: f.programId,
      stepStatuses: {
        pageview: step(f.clicks.count > 0),
        referrals: step(f.leads.count > 0),
        payments: step(ready),
      },
      statistics: {
        pageview: eventStatistics(f.clicks),
        referrals: eventStatistics(f.leads),
        payments: {
          paymentTrackingMode: f.payments.paymentTrackingMode,
          methodReady: ready,
          processorConnectionStatus: f.payments.connectionStatus,
          isProcessorConnected: connected,
          processorAccountId: connected ? f.payments.accountId : null,
          chargesEnabled: f.payments.chargesEnabled,
          payoutsEnabled: f.payments.payoutsEnabled,
          detailsSubmitted: f.payments.detailsSubmitted,
          connectionDate: connected ? f.payments.connectedAt : null,
        },
      },
      hasPartners: f.hasPartners,
      lastUpdated: f.now.toISOString(),
    },
  };
}

export type TrackingStatus = ReturnType<typeof buildTrackingStatus>;
