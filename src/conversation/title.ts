/**
 * A thread's title: the first words of a user's message, without the instruction and context
 * blocks in front of it. Undefined when nothing is left.
 */
export function threadTitle(text: string | undefined): string | undefined {
  const words = text
    ?.replace(/<(instructions|user-context)>[\s\S]*?<\/\1>/g, "")
    .replace(/\s+/g, " ")
    .trim();
  return words ? words.slice(0, 80) : undefined;
}
