// Stylesheets a page module imports: Bun bundles them into the page's CSS.
declare module "*.css";
