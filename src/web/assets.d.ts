// Styles the pages import (Bun bundles them into the page's stylesheet).
declare module "*.css";
