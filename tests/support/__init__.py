"""What the tests share and are not tests themselves: the checkout's and the corpus's paths
(``paths``), golden comparison and request views (``chat_views``), the fuzz layer
(``fuzzing``), the HTML checks (``html_cases``), making genuine sessions with the real
clients (``cline_genuine``, ``stream_json_scenarios``) and the scenario library
(``scenarios``). ``tests/`` is on ``sys.path`` (pytest puts the folder of the root
``conftest.py`` there), so a test imports ``support.<module>`` from any folder."""
