import blessed from "blessed";
import { PassThrough } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { useCells } from "./cells";
import { ENABLE_KEYS, InputTranslator, RESET_KEYS } from "./input";

/** How long a partial escape sequence is held back waiting for the rest of it. */
const HOLD_MS = 30;

type RawInput = PassThrough & { isTTY: boolean; isRaw: boolean; setRawMode(mode: boolean): RawInput };

/**
 * A stand-in for stdin that blessed reads from: the terminal's bytes after InputTranslator,
 * so Shift+Enter and friends reach blessed as keys it knows. Raw mode is passed through.
 */
function translatedInput(stdin: NodeJS.ReadStream): { stream: RawInput; close(): void } {
  const stream = new PassThrough() as RawInput;
  stream.isTTY = true;
  stream.isRaw = false;
  stream.setRawMode = (mode: boolean) => {
    stdin.setRawMode?.(mode);
    stream.isRaw = mode;
    return stream;
  };
  const translator = new InputTranslator();
  const decoder = new StringDecoder("utf8");
  let timer: ReturnType<typeof setTimeout> | undefined;
  const pass = (s: string) => {
    if (s && !stream.destroyed) stream.write(s);
  };
  const onData = (chunk: Buffer | string) => {
    clearTimeout(timer);
    pass(translator.push(typeof chunk === "string" ? chunk : decoder.write(chunk)));
    if (translator.holding) timer = setTimeout(() => pass(translator.flush()), HOLD_MS);
  };
  stdin.on("data", onData);
  stdin.resume();
  return {
    stream,
    close() {
      clearTimeout(timer);
      stdin.off("data", onData);
      if (stdin.isTTY) stdin.setRawMode?.(false);
      stdin.pause();
      stream.end();
    },
  };
}

export interface Terminal {
  screen: blessed.Widgets.Screen;
  /** Restores the terminal: key modes off, normal screen, cooked input. */
  close(): void;
}

/** Takes over the terminal with a blessed screen that understands modified Enter keys. */
export function openTerminal(opts: {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  warn: (m: string) => void;
  /** Called once when the terminal goes away (closed window, killed pane): the TUI must end. */
  onLost: () => void;
}): Terminal {
  const input = translatedInput(opts.stdin);
  let lost = false;
  const gone = (why: string) => () => {
    if (lost) return;
    lost = true;
    opts.warn(`terminal: ${why}; quitting`);
    opts.onLost();
  };
  opts.stdin.once("end", gone("input ended"));
  opts.stdin.once("close", gone("input closed"));
  opts.stdin.once("error", gone("input error"));
  opts.stdout.once("error", gone("output error"));
  const screen = blessed.screen({
    // @types/blessed has the two stream types of ScreenOptions swapped
    input: input.stream as never,
    output: opts.stdout as never,
    smartCSR: true,
    fullUnicode: true,
    autoPadding: true,
    warnings: false,
    // no `title`: under tmux blessed waits up to 5 s for output.bytesWritten, which Bun's
    // stdout does not count, before sending it (and keeps the process alive meanwhile)
  });
  useCells((blessed as unknown as { unicode: unknown }).unicode, screen.program);
  screen.program.on("warning", (m: string) => opts.warn(`terminal: ${m}`));
  const program = screen.program as unknown as { terminal: string; tput: { info?: { name?: string }; colors?: number } };
  opts.warn(`terminal: TERM=${program.terminal}, using terminfo ${program.tput.info?.name ?? "?"} (${program.tput.colors ?? "?"} colours)`);
  screen.program.hideCursor();
  opts.stdout.write(ENABLE_KEYS);
  let closed = false;
  return {
    screen,
    close() {
      if (closed) return;
      closed = true;
      opts.stdout.write(RESET_KEYS);
      screen.destroy();
      input.close();
    },
  };
}
