// Colour palettes of the editor's two accessible themes (light / dark); page/editor/contrast.mjs
// checks every token against every background it can sit on (WCAG AA, 4.5:1).
export const palettes = {
  light: {
    bg: "#ffffff", fg: "#1a1a1a", activeLine: "#e8f2ff", focus: "#0b5cad",
    overlays: { selectionMatch: "#d6f0cc", searchMatch: "#fff0a0", searchSelected: "#ffd9b8",
      selection: "#cfe0ff", matchingBracket: "#c8e8e4" },
    tokens: { fg: "#1a1a1a", keyword: "#7a0a8a", atom: "#1d1a8f", literal: "#0f5e3a", string: "#9a1111",
      special: "#8a3500", definition: "#0030c0", local: "#3a1a9a", type: "#00604a", className: "#0f5a64",
      macro: "#1d4a5a", property: "#0020a0", comment: "#6b4a00", invalid: "#b00000", heading: "#1a1a1a",
      link: "#0040b0", meta: "#404740" },
    pairs: { gutter: ["#595959", "#f5f5f5"], gutterActive: ["#595959", "#e2f2ff"], fold: ["#595959", "#eeeeee"] },
  },
  dark: {
    bg: "#1e1e1e", fg: "#e6e6e6", activeLine: "#2a2d33", focus: "#8cc4ff",
    overlays: { selectionMatch: "#2f4a33", searchMatch: "#4a4420", searchSelected: "#5a3a1a",
      selection: "#1f3a58", matchingBracket: "#1f4a45" },
    tokens: { fg: "#e6e6e6", keyword: "#d7a6e0", atom: "#9fc4ff", literal: "#b5d8a8", string: "#f0b090",
      special: "#ffc070", definition: "#e0e0b0", local: "#c8c0ff", type: "#7fe0c8", className: "#80d8e8",
      macro: "#a0d0e0", property: "#a8dcff", comment: "#b4bdb4", invalid: "#ffa8a8", heading: "#ffffff",
      link: "#a8c8ff", meta: "#c0c8c0" },
    pairs: { gutter: ["#b0b0b0", "#1e1e1e"], gutterActive: ["#d0d0d0", "#2a2d33"], fold: ["#d0d0d0", "#333338"],
      panel: ["#e6e6e6", "#252526"], field: ["#e6e6e6", "#1e1e1e"], button: ["#e6e6e6", "#3a3a3a"] },
  },
};
