import type { ServiceSchema } from "moleculer";

/**
 * Integration status for dashboard users (spec 2.4, 3.2). It owns no data: it
 * assembles the answer from attribution and programs. The endpoint and its
 * dashboard-session policy come with the status issue.
 */
const StatusService: ServiceSchema = {
  name: "status",
};

export default StatusService;
