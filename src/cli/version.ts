export { VERSION } from '../core/version.js';
