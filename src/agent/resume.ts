import { InvalidRequest } from "../errors";
import type { Gate } from "../conversation/gates";
import type { ToolOutputInput, TurnInput } from "./turn-types";

/** A request that the thread's gate does not let through: a 400 that changes nothing. */
export class GateBlocks extends InvalidRequest {
  constructor(
    message: string,
    /** The gate in the way, or undefined when the request resumes one that is not there. */
    readonly gate?: Gate["kind"],
  ) {
    super(message);
  }
}

/** Checks a turn's input against the gate its thread waits on (a new thread waits on none). */
export function checkResume(input: TurnInput, gate: Gate | undefined, gateUrl: string): void {
  switch (input.kind) {
    case "authorized":
      if (gate?.kind !== "oauth") throw new GateBlocks("No tool call is waiting for an extension to be connected on this thread.");
      return;
    case "approval":
      if (gate?.kind !== "approval") throw new GateBlocks("No tool call is waiting for approval on this thread.");
      return;
    case "recover":
      return;
    case "messages":
      return checkOutputs(input.toolOutputs, gate, gateUrl);
  }
}

/** New messages and outputs: an output must answer the call the thread waits on; without one, no gate may be in the way. */
function checkOutputs(toolOutputs: ToolOutputInput[], gate: Gate | undefined, gateUrl: string): void {
  if (toolOutputs.length === 0) {
    if (gate?.kind === "external_tool") {
      throw new GateBlocks(`This thread is waiting for the output of call ${gate.callId}; send a function_call_output item with that call_id first.`, gate.kind);
    }
    if (gate) throw new GateBlocks(gateElsewhere(gate, gateUrl), gate.kind);
    return;
  }
  if (!gate) throw new GateBlocks("No tool call is waiting for output on this thread.");
  if (gate.kind !== "external_tool") throw new GateBlocks(gateElsewhere(gate, gateUrl), gate.kind);
  if (toolOutputs.length > 1) {
    throw new GateBlocks(`Only one function_call_output is expected: the thread waits for call ${gate.callId}.`, gate.kind);
  }
  const got = toolOutputs[0]!.call_id;
  if (got !== gate.callId) throw new GateBlocks(`call_id ${JSON.stringify(got)} does not match the pending call ${gate.callId}.`, gate.kind);
}

function gateElsewhere(gate: Gate, url: string): string {
  const what =
    gate.kind === "approval"
      ? `approval of ${gate.details.tool}`
      : gate.kind === "oauth"
        ? `connection of the extension ${gate.details.extension} (OAuth)`
        : `${gate.kind} gate`;
  const where = gate.kind === "oauth" ? gate.details.connect_url : url;
  return `This thread waits on a pending ${what}; resolve it in the web UI at ${where} or another channel first.`;
}
