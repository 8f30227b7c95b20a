import { Type, type Static } from "@sinclair/typebox";

const PendingCall = Type.Object({ call_id: Type.String(), name: Type.String(), arguments: Type.String(), stored: Type.Optional(Type.String()) });

/** What an approval gate shows a person besides the call: where its data could go (from a tainted turn), an identity file's change. */
export const ApprovalDetails = Type.Object({
  tool: Type.String(),
  arguments: Type.String(),
  destination: Type.Optional(Type.String()),
  diff: Type.Optional(Type.String()),
});
export type ApprovalDetails = Static<typeof ApprovalDetails>;

/** What an OAuth gate shows a person: the call, and the extension to connect, where. */
export const OAuthDetails = Type.Object({ tool: Type.String(), arguments: Type.String(), extension: Type.String(), connect_url: Type.String() });
export type OAuthDetails = Static<typeof OAuthDetails>;

const at = {
  callId: Type.String(),
  responseId: Type.String(),
  /** The calls of the same assistant step still to be handled, starting with `callId`'s for approval and OAuth. */
  pending: Type.Array(PendingCall),
};

/** The gate a thread waits on: a caller's tool call, an approval or an OAuth connection, each with what it shows a person. */
export const Gate = Type.Union([
  Type.Object({ kind: Type.Literal("external_tool"), ...at }),
  Type.Object({ kind: Type.Literal("approval"), ...at, details: ApprovalDetails }),
  Type.Object({ kind: Type.Literal("oauth"), ...at, details: OAuthDetails }),
]);
export type Gate = Static<typeof Gate>;
export type GateKind = Gate["kind"];
export type GateOf<K extends GateKind> = Extract<Gate, { kind: K }>;

/** What the gates table keeps as `data`: the gate but its kind, call and response, which have columns of their own. */
export type GateData<K extends GateKind = GateKind> = K extends GateKind ? Omit<GateOf<K>, "kind" | "callId" | "responseId"> : never;

/** A stored gate as the gate it is: its `kind` column says which shape its `data` has (they are written together). */
export function storedGate(row: { kind: GateKind; callId: string; responseId: string; data: GateData }): Gate {
  return { ...row.data, kind: row.kind, callId: row.callId, responseId: row.responseId } as Gate;
}

/** The `data` a gate is stored with. */
export function gateData(gate: Gate): GateData {
  const { kind: _kind, callId: _call, responseId: _response, ...data } = gate;
  return data;
}
