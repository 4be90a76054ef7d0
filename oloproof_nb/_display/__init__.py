"""What a person sees: the theme, HTML and Markdown tables, reprs, the case panel, plots, exports, reports."""
