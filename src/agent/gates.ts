import type { Gate } from "../conversation/gates";
import type { LoopOutcome } from "./loop";
import type { TurnResult } from "./turn-types";

/**
 * The gate a paused turn leaves on its thread, and, for channels that cannot show gates to a
 * person (the Responses API), the error that tells the caller where to resolve it.
 */
export function gateOf(
  out: LoopOutcome,
  responseId: string,
  surfacesGates: boolean,
  gateUrl: string,
): { gate: Gate | null; error: TurnResult["error"] } {
  const at = { responseId };
  switch (out.kind) {
    case "done":
      return { gate: null, error: null };
    case "paused":
      return { gate: { ...at, kind: "external_tool", callId: out.call.call_id, pending: out.pending }, error: null };
    case "approval": {
      const { destination, diff } = out.review ?? {};
      const details = { tool: out.call.name, arguments: out.call.arguments, ...(destination ? { destination } : {}), ...(diff ? { diff } : {}) };
      const gate: Gate = { ...at, kind: "approval", callId: out.call.call_id, pending: out.pending, details };
      const why = destination
        ? `The tool ${out.call.name} could send data to ${destination}, and this turn has read untrusted content (a web page, a tool's answer…), so it needs the user's approval.`
        : diff
          ? `The tool ${out.call.name} would change ${out.review?.identityFile ?? "an identity file"}, which needs the user's approval.`
          : `The tool ${out.call.name} needs approval.`;
      const message = `${why} Approve or deny it in the web UI at ${gateUrl} or in the terminal UI; the turn goes on from there.`;
      return { gate, error: surfacesGates ? null : { code: "approval_required", message } };
    }
    case "oauth": {
      const details = { tool: out.call.name, arguments: out.call.arguments, extension: out.extension, connect_url: out.url };
      const gate: Gate = { ...at, kind: "oauth", callId: out.call.call_id, pending: out.pending, details };
      const message = `The tool ${out.call.name} needs the extension ${out.extension} to be connected to your account. Connect it in the web UI at ${out.url}; the turn goes on from there.`;
      return { gate, error: surfacesGates ? null : { code: "auth_required", message } };
    }
  }
}
