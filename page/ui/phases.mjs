// The eight phases of a mission letter, in the seed's order, with the one-line meaning the tray
// shows beside each (the phase word itself is always shown verbatim).

export const PHASES = ["judging", "executing", "gate", "review", "merge_wait", "landed", "failed", "archived"];

export const PHASE_MEANING = {
  judging: "being judged",
  executing: "work under way",
  gate: "gate running",
  review: "in review",
  merge_wait: "gate green — receipt not landed",
  landed: "receipt imported",
  failed: "did not finish",
  archived: "set aside by a person",
};
