import type { Database } from "../../shared/storage/database";

/**
 * `processing`: claimed by an instance until `claimedUntil`; `failed`: released
 * after an error, so the processor's retry is processed; `processed` and
 * `ignored`: done, a redelivery is a duplicate.
 */
export type ProcessorEventStatus = "processing" | "processed" | "failed" | "ignored";

export interface ProcessorEvent {
  eventId: string;
  type: string;
  programId: number | null;
  status: ProcessorEventStatus;
  attempts: number;
  claimedUntil: Date | null;
  receivedAt: Date;
  processedAt: Date | null;
  lastError: string | null;
  outcome: Record<string, unknown> | null;
}

/** A processor reference (payment intent, invoice, charge, subscription) of a recorded sale. */
export interface ProcessorPayment {
  programId: number;
  reference: string;
  transactionId: string;
  /** The sale's amount (net of tax) and what the processor charged; refunds arrive in the latter. */
  saleAmountCents: number;
  chargedAmountCents: number;
}

/** A refund or dispute seen at the processor, in the charged unit. */
export interface ProcessorRefund {
  programId: number;
  refundId: string;
  transactionId: string;
  amountCents: number;
  kind: "refund" | "dispute";
  /** The processor's own creation time: refunds are applied in this order. */
  createdAt: Date;
}

/** Storage contract of the processor service: the event log and the processor's references. */
export interface ProcessorRepository {
  /**
   * Claims an event for processing: new ones, failed ones, and ones whose
   * claim expired. Returns the stored event and whether this call claimed it.
   */
  claimEvent(e: { eventId: string; type: string; programId: number | null }, leaseMs: number, now: Date): Promise<{ claimed: boolean; event: ProcessorEvent }>;
  finishEvent(eventId: string, status: "processed" | "ignored", outcome: Record<string, unknown>, now: Date): Promise<void>;
  /** Marks a claimed event failed so a redelivery processes it again. */
  releaseEvent(eventId: string, error: string): Promise<void>;
  getEvent(eventId: string): Promise<ProcessorEvent | null>;
  /** Keeps the first link of a reference. */
  linkPayment(p: ProcessorPayment): Promise<void>;
  findPayment(programId: number, reference: string): Promise<ProcessorPayment | null>;
  /** Keeps the first record of a refund id. */
  recordRefund(r: ProcessorRefund): Promise<void>;
  /** A sale's refunds and disputes in the processor's order. */
  listRefunds(programId: number, transactionId: string): Promise<ProcessorRefund[]>;
}

export async function createProcessorRepository(db: Database): Promise<ProcessorRepository> {
  if (db.kind === "sql") {
    const { SqlProcessorRepository } = await import("./repository.sql");
    return SqlProcessorRepository.create(db.sql);
  }
  const { MongoProcessorRepository } = await import("./repository.mongo");
  return MongoProcessorRepository.create(db.mongo);
}
