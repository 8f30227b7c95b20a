import { fill, h } from "./dom";

/** What the header's actions ask of the chat screen: the work itself is its. */
export interface ThreadActionsHost {
  /** The open conversation's title: what the rename box starts from. */
  title(): string;
  /** Renames the open conversation to this (trimmed, not empty). */
  rename(title: string): void;
  /** Deletes the open conversation, the person having confirmed it. */
  remove(): void;
  /** A box opened or closed: the header is drawn again. */
  changed(): void;
}

/**
 * The open conversation's Rename and Delete, in its header: the rename box, and the
 * confirmation a delete asks for first. The focus goes into what opens and back to its
 * button when it closes.
 */
export class ThreadActions {
  readonly #rename = h("button", { type: "button", class: "ghost head-action", text: "Rename" });
  readonly #renameForm = h("form", { class: "rename", hidden: true });
  readonly #renameInput = h("input", { type: "text", "aria-label": "Conversation title", maxLength: 200, dir: "auto" });
  readonly #delete = h("button", { type: "button", class: "ghost head-action delete-chat", text: "Delete" });
  readonly #confirmDelete = h("div", { class: "confirm-delete", role: "alertdialog", "aria-labelledby": "confirm-delete-text", hidden: true });
  readonly #keep = h("button", { type: "button", class: "ghost", text: "Keep" });
  /** What goes in the header, in order. */
  readonly els: HTMLElement[] = [this.#renameForm, this.#rename, this.#delete, this.#confirmDelete];

  constructor(private readonly host: ThreadActionsHost) {
    this.#rename.addEventListener("click", () => this.askRename(true));
    this.#renameForm.append(
      this.#renameInput,
      h("button", { type: "submit", class: "primary", text: "Save" }),
      h("button", { type: "button", class: "ghost", text: "Cancel", onclick: () => this.askRename(false) }),
    );
    this.#renameForm.addEventListener("submit", (e) => {
      e.preventDefault();
      const title = this.#renameInput.value.trim();
      if (title) host.rename(title);
    });
    this.#renameInput.addEventListener("keydown", (e) => {
      if (e.key === "Escape") (e.stopPropagation(), this.askRename(false));
    });
    this.#delete.addEventListener("click", () => this.askDelete(true));
    this.#keep.addEventListener("click", () => this.askDelete(false));
    fill(
      this.#confirmDelete,
      h("span", { class: "small", id: "confirm-delete-text", text: "Delete this conversation for good?" }),
      h("button", { type: "button", class: "danger", text: "Delete conversation", onclick: () => host.remove() }),
      this.#keep,
    );
  }

  askDelete(asking: boolean, focus = true): void {
    this.#confirmDelete.hidden = !asking;
    this.host.changed();
    if (!focus) return;
    if (asking) this.#keep.focus();
    else this.#delete.focus();
  }

  askRename(asking: boolean, focus = true): void {
    this.#renameForm.hidden = !asking;
    this.host.changed();
    if (asking) {
      this.#renameInput.value = this.host.title();
      this.#renameInput.focus();
      this.#renameInput.select();
    } else if (focus) this.#rename.focus();
  }

  /** Esc: closes the box that is open; false when none was. */
  escape(): boolean {
    if (!this.#confirmDelete.hidden) return (this.askDelete(false), true);
    if (!this.#renameForm.hidden) return (this.askRename(false), true);
    return false;
  }

  /** The buttons show for a stored conversation, while no box of theirs is open. */
  show(hasThread: boolean): void {
    const asking = !this.#confirmDelete.hidden || !this.#renameForm.hidden;
    this.#delete.hidden = !hasThread || asking;
    this.#rename.hidden = !hasThread || asking;
  }
}
