/**
 * Messages between the processes that share the database: each hears the others' messages
 * on a topic, never its own (its own code hears those directly). PostgreSQL replicas carry
 * them over LISTEN/NOTIFY; a libSQL file has one process, so there is nobody to tell.
 * Messages of one process arrive in the order it published them.
 */
export interface Broadcast {
  publish(topic: string, message: unknown): void;
  subscribe(topic: string, fn: (message: unknown) => void): () => void;
}

export const localBroadcast: Broadcast = {
  publish() {},
  subscribe: () => () => {},
};
