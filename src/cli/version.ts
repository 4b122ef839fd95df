export { VERSION } from '../core/vouchVersion.js';
