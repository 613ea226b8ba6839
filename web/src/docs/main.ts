// The API reference page (GET /docs): Redoc (its standalone bundle, served by this
// service) rendering the OpenAPI document the service publishes. The document is a
// reference route, so the page needs no API key.
import './style.css';

declare const Redoc: { init(specUrl: string, options: Record<string, unknown>, element: HTMLElement | null): void };

Redoc.init('/api/v1/openapi.json', { hideDownloadButton: false, expandResponses: '200', jsonSampleExpandLevel: 2, disableSearch: false }, document.getElementById('redoc'));
