from chronorank.cli import main

raise SystemExit(main())
